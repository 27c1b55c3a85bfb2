package io.github.delayqueue.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.convert.ConverterNotFoundException;

/**
 * Explains a startup that failed because a key directly under
 * {@code delay-queue.schedules} holds a value, such as
 * {@code delay-queue.schedules.enabled=false}: each key there names a schedule, so the
 * value cannot be bound to one, and there is no switch that turns schedules off.
 * Registered in {@code META-INF/spring.factories}, ahead of Spring Boot's own analysis of
 * the binding, which names only the types.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class ScheduleSwitchFailureAnalyzer extends AbstractFailureAnalyzer<BindException> {

	private static final ConfigurationPropertyName SCHEDULES = ConfigurationPropertyName.of("delay-queue.schedules");

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, BindException cause) {
		ConfigurationPropertyName name = cause.getName();
		if (!SCHEDULES.isParentOf(name) || findCause(cause, ConverterNotFoundException.class) == null) {
			return null;
		}
		// Not always known: a value where a map of the schedule's properties is expected.
		ConfigurationProperty property = cause.getProperty();
		String schedule = name.getLastElement(ConfigurationPropertyName.Form.ORIGINAL);
		String description = "Property " + name
				+ ((property != null) ? " = " + property.getValue()
						+ ((property.getOrigin() != null) ? " (set by " + property.getOrigin() + ")" : "") : "")
				+ " is read as a schedule named '" + schedule
				+ "', but a value is not a schedule: each key under delay-queue.schedules names one, with its"
				+ " topic and a cron or fixed-rate below it (delay-queue.schedules." + schedule + ".topic, ...).";
		String action = "There is no switch that turns the schedules off. To keep them out of tests, declare them in a"
				+ " profile or an application.yml the tests do not read, or pause them in the test"
				+ " (see docs/testing.md, \"Schedules in tests\"); else remove delay-queue.schedules." + schedule
				+ " or give it a topic and a cron or fixed-rate.";
		return new FailureAnalysis(description, action, cause);
	}

}
