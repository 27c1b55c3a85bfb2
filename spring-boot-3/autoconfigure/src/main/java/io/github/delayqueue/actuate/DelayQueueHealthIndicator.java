package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.Collection;
import java.util.List;

import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.store.MessageStore;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/**
 * The {@code delayQueue} health contributor on Spring Boot 3: the verdict of a
 * {@link DelayQueueHealthCheck} as a status ({@code LATE} becomes the configured lateness
 * status, by default {@code OUT_OF_SERVICE}) with its details. Close it to stop the
 * check's threads.
 */
public class DelayQueueHealthIndicator extends AbstractHealthIndicator implements AutoCloseable {

	private final DelayQueueHealthCheck check;

	private final Status latenessStatus;

	/**
	 * Creates the health contributor.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param maxLateness how late a topic's oldest waiting message may be, or
	 * {@code null} for no limit
	 * @param latenessStatus the status when a topic is later than that
	 * @param timeout how long to wait for Redis before reporting {@code DOWN}
	 * @param dataLoss what tells when Redis lost the queue's data, or {@code null}
	 */
	public DelayQueueHealthIndicator(MessageStore store, DelayQueueRuntime runtime, @Nullable Duration maxLateness,
			Status latenessStatus, Duration timeout, @Nullable RedisDataLossWatch dataLoss) {
		this(store, runtime, maxLateness, latenessStatus, timeout, dataLoss, List.of());
	}

	/**
	 * Creates the health contributor of the topics listened to and of others.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param maxLateness how late a topic's oldest waiting message may be, or
	 * {@code null} for no limit
	 * @param latenessStatus the status when a topic is later than that
	 * @param timeout how long to wait for Redis before reporting {@code DOWN}
	 * @param dataLoss what tells when Redis lost the queue's data, or {@code null}
	 * @param declaredTopics topics to check too, whether or not they are listened to here
	 */
	public DelayQueueHealthIndicator(MessageStore store, DelayQueueRuntime runtime, @Nullable Duration maxLateness,
			Status latenessStatus, Duration timeout, @Nullable RedisDataLossWatch dataLoss,
			Collection<String> declaredTopics) {
		super("Delay queue health check failed");
		this.check = new DelayQueueHealthCheck(store, runtime, maxLateness, timeout, dataLoss, declaredTopics);
		this.latenessStatus = latenessStatus;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		DelayQueueHealthCheck.Health health = this.check.check();
		Status status = switch (health.verdict()) {
			case UP -> Status.UP;
			case DOWN -> Status.DOWN;
			case LATE -> this.latenessStatus;
		};
		builder.status(status).withDetails(health.details());
	}

	/**
	 * Stops the threads that run the checks; a check still waiting for Redis is
	 * interrupted.
	 */
	@Override
	public void close() {
		this.check.close();
	}

}
