package io.github.delayqueue.autoconfigure;

import java.util.Objects;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.RedisConnectionFailureException;

/**
 * Explains a startup that failed because Redis could not be reached, typically when the
 * delay queue's listeners subscribe at startup: it names the address that was tried, the
 * {@code spring.data.redis.*} properties it came from and those that point the
 * application at its Redis, instead of a bare stack trace. Applies to any
 * {@link RedisConnectionFailureException} in the cause chain; registered in
 * {@code META-INF/spring.factories}.
 */
public final class RedisConnectionFailureAnalyzer extends AbstractFailureAnalyzer<RedisConnectionFailureException> {

	private final Environment environment;

	/**
	 * Creates the analyzer; Spring Boot calls this.
	 * @param environment the environment of the application that failed to start
	 */
	public RedisConnectionFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RedisConnectionFailureException cause) {
		ConfiguredRedis redis = ConfiguredRedis.from(this.environment);
		String description = "Could not connect to Redis at " + redis.address() + ", set by " + redis.properties()
				+ ": " + reason(cause) + ".\n\nThe Redis to use is set by spring.data.redis.host and"
				+ " spring.data.redis.port (default localhost:6379) or spring.data.redis.url for one server,"
				+ " spring.data.redis.cluster.nodes for a cluster, or spring.data.redis.sentinel.master and"
				+ " spring.data.redis.sentinel.nodes for Sentinel.";
		String action = "Start Redis at " + redis.address() + ", or set the spring.data.redis.* properties above to"
				+ " the Redis this application should use (with spring.data.redis.username, password and"
				+ " ssl.enabled if it needs them), and check that this host can reach it.";
		return new FailureAnalysis(description, action, cause);
	}

	private static String reason(RedisConnectionFailureException failure) {
		Throwable client = (failure.getCause() != null) ? failure.getCause() : failure;
		Throwable root = NestedExceptionUtils.getMostSpecificCause(failure);
		return (root == client) ? message(client) : message(client) + " (" + message(root) + ")";
	}

	private static String message(Throwable failure) {
		return Objects.requireNonNullElse(failure.getMessage(), failure.getClass().getName());
	}

}
