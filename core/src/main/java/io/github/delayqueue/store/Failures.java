package io.github.delayqueue.store;

import java.util.concurrent.CompletionException;

import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;

/**
 * The text of a failure as operations show it (the endpoint, the dashboard, the health,
 * the logs): never {@code null} nor an exception's {@code toString}.
 */
public final class Failures {

	private Failures() {
	}

	/**
	 * Describes a failure: its own message with its most specific cause's (Redis's reply,
	 * which Lettuce wraps in "Error in execution"), else the name of its type.
	 * @param failure the failure
	 * @return the text
	 */
	public static String describe(@Nullable Throwable failure) {
		if (failure == null) {
			return "unknown failure";
		}
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		String own = text(cause.getMessage());
		Throwable specific = NestedExceptionUtils.getMostSpecificCause(cause);
		String root = (specific != cause) ? text(specific.getMessage()) : null;
		if (own == null) {
			return (root != null) ? root : specific.getClass().getSimpleName();
		}
		return (root != null && !own.contains(root)) ? own + ": " + root : own;
	}

	/**
	 * A message that says something, or {@code null} (a wrapped null can read "null").
	 */
	private static @Nullable String text(@Nullable String message) {
		return (message == null || message.isBlank() || message.equals("null")) ? null : message;
	}

}
