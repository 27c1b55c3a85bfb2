package io.github.delayqueue.listener;

import java.util.Collection;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by a batch {@link DelayListener} method (one taking a {@code List}) when only
 * some messages of the batch failed: the messages it names by id are retried after their
 * backoff (or dead-lettered on their last attempt), and the others are acknowledged. Ids
 * that are not in the batch are ignored with a warning. Any other exception retries every
 * message of the batch.
 */
public class BatchListenerFailedException extends RuntimeException {

	private final Set<String> failedIds;

	/**
	 * Names the failed messages of a batch.
	 * @param message what went wrong
	 * @param failedIds the ids of the failed messages, at least one
	 * @param cause the failure, or {@code null}; it becomes the dead-letter error of a
	 * message on its last attempt
	 * @throws IllegalArgumentException if no id is given
	 */
	public BatchListenerFailedException(String message, Collection<String> failedIds, @Nullable Throwable cause) {
		super(message, cause);
		if (failedIds.isEmpty()) {
			throw new IllegalArgumentException("A BatchListenerFailedException must name at least one failed message;"
					+ " throw another exception to retry the whole batch");
		}
		this.failedIds = Set.copyOf(failedIds);
	}

	/**
	 * Returns the ids of the failed messages.
	 * @return the ids, without duplicates
	 */
	public Set<String> failedIds() {
		return this.failedIds;
	}

}
