package io.github.delayqueue.sample;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.boot.context.event.SpringApplicationEvent;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Lets the sample run without a Redis to hand: when no {@code spring.data.redis} host,
 * port, url, sentinel or cluster property is set, starts an {@link EmbeddedRedisServer}
 * before any bean is created and points {@code spring.data.redis.host} and {@code port}
 * at it. The server is stopped after every bean has been destroyed when the application
 * context closes, or when startup fails, and on Linux and macOS also when the JVM is
 * killed (see {@link EmbeddedRedisServer}). With Redis configured, nothing is started.
 */
public class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	/**
	 * The name of the property source that points {@code spring.data.redis} at the
	 * server.
	 */
	public static final String PROPERTY_SOURCE_NAME = "embeddedRedis";

	private static final List<ConfigurationPropertyName> CONNECTION_PROPERTIES = List.of(
			ConfigurationPropertyName.of("spring.data.redis.host"),
			ConfigurationPropertyName.of("spring.data.redis.port"),
			ConfigurationPropertyName.of("spring.data.redis.url"),
			ConfigurationPropertyName.of("spring.data.redis.sentinel"),
			ConfigurationPropertyName.of("spring.data.redis.cluster"));

	private final Log logger;

	/**
	 * Creates the post-processor; Spring Boot calls this.
	 * @param logFactory gives a log that is written once logging is set up
	 */
	public EmbeddedRedisEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(EmbeddedRedisEnvironmentPostProcessor.class);
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (isRedisConfigured(environment)) {
			this.logger.debug("spring.data.redis.* configured: not starting an embedded Redis");
			return;
		}
		EmbeddedRedisServer redis;
		try {
			redis = EmbeddedRedisServer.start();
		}
		catch (IOException | RuntimeException ex) {
			throw new IllegalStateException(
					"No spring.data.redis.* configured and the embedded Redis did not start: " + ex.getMessage(), ex);
		}
		application.addListeners(new StopWithApplication(redis));
		environment.getPropertySources()
			.addLast(new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of("spring.data.redis.host",
					EmbeddedRedisServer.HOST, "spring.data.redis.port", redis.port())));
		this.logger.info("No spring.data.redis.* configured: started embedded Redis " + redis.description() + " on "
				+ EmbeddedRedisServer.HOST + ":" + redis.port());
	}

	/**
	 * Runs after the application's own configuration (application.yml and the like) is
	 * loaded.
	 */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

	private static boolean isRedisConfigured(ConfigurableEnvironment environment) {
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			for (ConfigurationPropertyName name : CONNECTION_PROPERTIES) {
				if (source.getConfigurationProperty(name) != null
						|| source.containsDescendantOf(name) == ConfigurationPropertyState.PRESENT) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * Ties the server to the application: registered as the context's first disposable
	 * bean, it is destroyed last, after the delay queue's listeners have stopped; if
	 * startup fails, it is stopped at once.
	 */
	private record StopWithApplication(
			EmbeddedRedisServer redis) implements ApplicationListener<SpringApplicationEvent> {

		@Override
		public void onApplicationEvent(SpringApplicationEvent event) {
			if (event instanceof ApplicationPreparedEvent prepared
					&& prepared.getApplicationContext().getBeanFactory() instanceof DefaultListableBeanFactory beans) {
				beans.registerDisposableBean("embeddedRedisServer", this.redis::stop);
			}
			else if (event instanceof ApplicationFailedEvent) {
				this.redis.stop();
			}
		}

	}

}
