package io.github.delayqueue.runtime.support;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Continues from a store call that does not wait for Redis: the reply arrives on the
 * Redis client's I/O thread, where nothing may block, so what follows runs on the
 * runtime's scheduler.
 */
public final class Replies {

	private Replies() {
	}

	/**
	 * Sends a call and continues on an executor once it is answered.
	 * @param <T> the type of the reply
	 * @param call sends the call; a failure it throws at once counts as a failed call
	 * @param executor where {@code next} runs
	 * @param next takes the reply, or else the failure (never a
	 * {@link CompletionException})
	 * @param refused takes the reply, or else the failure, where it arrived, if the
	 * executor refuses the task (it is stopping); it must not block
	 */
	public static <T> void send(Supplier<CompletableFuture<T>> call, Executor executor,
			BiConsumer<@Nullable T, @Nullable Throwable> next, BiConsumer<@Nullable T, @Nullable Throwable> refused) {
		CompletableFuture<T> sent;
		try {
			sent = call.get();
		}
		catch (RuntimeException | Error ex) {
			sent = CompletableFuture.failedFuture(ex);
		}
		sent.whenComplete((reply, failure) -> {
			Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
			try {
				executor.execute(() -> next.accept(reply, cause));
			}
			catch (RejectedExecutionException ex) {
				refused.accept(reply, cause);
			}
		});
	}

	/**
	 * The failure of a call, to be thrown where only runtime exceptions are handled.
	 * @param failure what the call failed with
	 * @return the failure as a runtime exception, to throw
	 * @throws Error if the failure is one
	 */
	public static RuntimeException rethrow(Throwable failure) {
		if (failure instanceof Error error) {
			throw error;
		}
		return (failure instanceof RuntimeException runtime) ? runtime
				: new IllegalStateException("Store call failed: " + failure, failure);
	}

}
