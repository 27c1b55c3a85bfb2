package io.github.delayqueue.store;

import io.github.delayqueue.time.Durations;
import java.time.Duration;

import org.springframework.dao.TransientDataAccessException;

/**
 * Redis ran a write on the primary but fewer replicas than required confirmed it within
 * the timeout ({@code WAIT}): the write is on the primary, and would be lost only if the
 * primary failed before its replicas caught up.
 */
public class NotReplicatedException extends TransientDataAccessException {

	private final int required;

	private final long confirmed;

	/**
	 * Creates an exception.
	 * @param required the replicas required
	 * @param confirmed the replicas that confirmed the write
	 * @param timeout how long Redis waited for them
	 */
	public NotReplicatedException(int required, long confirmed, Duration timeout) {
		super("Written on the primary, but confirmed by " + confirmed + " of the " + required
				+ " replicas required within " + Durations.format(timeout)
				+ " (delay-queue.producer.replication.*): it is lost only if "
				+ "the primary fails before its replicas catch up");
		this.required = required;
		this.confirmed = confirmed;
	}

	/**
	 * @return the number of replicas required
	 */
	public int required() {
		return this.required;
	}

	/**
	 * @return the number of replicas that confirmed the write
	 */
	public long confirmed() {
		return this.confirmed;
	}

}
