package io.github.delayqueue.actuate;

import java.util.Map;
import java.util.function.Supplier;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.store.Failures;
import io.github.delayqueue.store.PartitionCountException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.dao.DataAccessException;

/**
 * How the {@code delayqueue} endpoint answers what it cannot do: 404 for a read that
 * found nothing, 503 when Redis cannot be read, 400 for an invalid topic or a topic this
 * application spreads over another number of partitions than Redis does.
 */
final class EndpointErrors {

	private static final Log logger = LogFactory.getLog(DelayQueueEndpoint.class);

	private EndpointErrors() {
	}

	/**
	 * Reads through the endpoint: 404 without a body for {@code null}, 503 naming what
	 * did not answer when Redis cannot be read (each read waits at most the store's
	 * timeout).
	 * @param read the read
	 * @return what it read, or the error
	 */
	static WebEndpointResponse<Object> answer(Supplier<@Nullable Object> read) {
		try {
			Object body = read.get();
			return (body != null) ? new WebEndpointResponse<>(body)
					: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		catch (DataAccessException ex) {
			String cause = Failures.describe(ex);
			logger.warn("delayqueue endpoint: Redis could not be read: " + cause);
			return new WebEndpointResponse<>(Map.of("error", "Redis could not be read: " + cause),
					WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		}
	}

	/**
	 * Runs an operation, answering 400 with the reason when this application spreads the
	 * topic over another number of partitions than Redis does.
	 * @param operation the operation
	 * @param <T> what it returns
	 * @return what it returned
	 */
	static <T> T refusingStaleCounts(Supplier<T> operation) {
		try {
			return operation.get();
		}
		catch (PartitionCountException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Partition count");
		}
	}

	/**
	 * Answers 400 for a name that is no topic's (nor a topic's dead letters).
	 * @param topic the topic
	 */
	static void requireTopic(String topic) {
		try {
			Topics.requireValidOrDeadLetters(topic);
		}
		catch (InvalidMessageException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid topic");
		}
	}

}
