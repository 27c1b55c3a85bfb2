package io.github.delayqueue.listener;

import java.util.Map;

/**
 * A failed delivery, as a {@link DelayListenerErrorHandler} sees it.
 *
 * @param topic the topic
 * @param id the message id
 * @param attempt the attempt that failed, 1 for the first delivery
 * @param maxAttempts the listener's maximum attempts
 * @param exception what the listener threw; for a batch listener, what the call threw
 * @param priority the message's priority, 0 to 9
 * @param headers the headers sent with the message
 * @param defaultAction what the built-in policy does: dead-letter on the last attempt or
 * for an exception the listener does not retry ({@code noRetryFor}), slow down for a
 * {@link SlowDownException}, else retry after the listener's backoff
 */
public record ListenerFailure(String topic, String id, int attempt, int maxAttempts, Throwable exception, int priority,
		Map<String, String> headers, FailureAction defaultAction) {

	/**
	 * Tells whether the exception, or one of its causes, is an instance of a type.
	 * @param type the type
	 * @return {@code true} if the exception or a cause is one
	 */
	public boolean causedBy(Class<? extends Throwable> type) {
		return ExceptionCauses.find(this.exception, type) != null;
	}

}
