package io.github.delayqueue.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.core.env.Environment;

/**
 * Finds the keys under {@code delay-queue.} that no property binds, typos such as
 * {@code delay-queue.listner.max-attempts} that would otherwise be ignored without a
 * word: at startup it logs a warning for each, naming where it was set and the closest
 * known key, or, with {@code delay-queue.fail-on-unknown-properties=true}, fails the
 * startup with {@link UnknownPropertiesException}.
 */
final class UnknownPropertiesCheck implements InitializingBean {

	private static final Log logger = LogFactory.getLog(UnknownPropertiesCheck.class);

	private static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("delay-queue");

	private static final KnownProperties KNOWN = KnownProperties.ofDelayQueueProperties();

	/** The most edits from a known key that make a "did you mean" of it. */
	private static final int CLOSE = 3;

	private final Environment environment;

	private final boolean failOnUnknown;

	UnknownPropertiesCheck(Environment environment, boolean failOnUnknown) {
		this.environment = environment;
		this.failOnUnknown = failOnUnknown;
	}

	@Override
	public void afterPropertiesSet() {
		List<UnknownProperty> unknown = unknownProperties(this.environment);
		if (unknown.isEmpty()) {
			return;
		}
		if (this.failOnUnknown) {
			throw new UnknownPropertiesException(unknown.stream().map(UnknownProperty::refused).toList());
		}
		for (UnknownProperty property : unknown) {
			logger
				.warn(property.ignored() + " (delay-queue.fail-on-unknown-properties=true fails the startup instead)");
		}
	}

	/**
	 * The keys under {@code delay-queue.} in an environment that no property binds, each
	 * described with where it was set and the closest known key.
	 * @param environment the environment
	 * @return each unknown key, in the order of the property sources
	 */
	static List<UnknownProperty> unknownProperties(Environment environment) {
		Map<ConfigurationPropertyName, @Nullable ConfigurationProperty> unknown = new LinkedHashMap<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			iterable.stream()
				.filter((name) -> PREFIX.isAncestorOf(name) && !unknown.containsKey(name) && !KNOWN.isKnown(name))
				.forEach((name) -> unknown.put(name, source.getConfigurationProperty(name)));
		}
		List<UnknownProperty> problems = new ArrayList<>();
		unknown.forEach((name, property) -> problems
			.add(new UnknownProperty("Unknown property " + name + where(property), suggestion(KNOWN.closest(name)))));
		return problems;
	}

	/**
	 * A key under {@code delay-queue.} that no property binds.
	 *
	 * @param what the key and where it was set
	 * @param suggestion the closest known key
	 */
	record UnknownProperty(String what, String suggestion) {

		/**
		 * @return the sentence of a warning: the startup goes on without the key
		 */
		String ignored() {
			return this.what + " is ignored: " + this.suggestion;
		}

		/**
		 * @return the sentence of a failed startup
		 */
		String refused() {
			return this.what + ": " + this.suggestion;
		}

	}

	private static String suggestion(KnownProperties.Closest closest) {
		return (closest.distance() <= CLOSE)
				? "no delay-queue property has this name; did you mean " + closest.key() + "?"
				: "no delay-queue property has this name, nor one close to it; the closest is " + closest.key();
	}

	private static String where(@Nullable ConfigurationProperty property) {
		if (property == null) {
			return "";
		}
		Origin origin = property.getOrigin();
		if (origin != null) {
			return " (set by " + origin + ")";
		}
		Object source = property.getSource().getUnderlyingSource();
		if (source instanceof org.springframework.core.env.PropertySource<?> propertySource) {
			return " (set in property source \"" + propertySource.getName() + "\")";
		}
		return "";
	}

}
