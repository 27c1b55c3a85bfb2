package io.github.delayqueue.store;

import java.time.Duration;
import java.util.function.Supplier;

import io.github.delayqueue.time.RetryBackoff;

import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * The one rule for calling the store again after a failure, as two {@link BackOff}s of
 * the same doubling steps: {@link #RETRIES} for a call that ends a lease or sends what a
 * transaction held back, where giving up means the message is delivered again or logged
 * as not sent (three tries, 100 ms and then 200 ms apart); {@link #OUTAGE} for the loops
 * that claim and promote while Redis does not answer (100 ms, doubling up to 5 s, without
 * end). {@link #withRetries(Supplier)} applies the first to a call that waits for Redis.
 */
public final class StoreCalls {

	private static final Duration FIRST_WAIT = Duration.ofMillis(100);

	/** Two retries after a failed call: 100 ms, then 200 ms later. */
	public static final BackOff RETRIES = new RetryBackoff(FIRST_WAIT, 2.0, FIRST_WAIT.multipliedBy(2)).limitedTo(2);

	/** The waits while Redis does not answer: 100 ms, doubling up to 5 s. */
	public static final RetryBackoff OUTAGE_WAITS = new RetryBackoff(FIRST_WAIT, 2.0, Duration.ofSeconds(5));

	/** While Redis does not answer: {@link #OUTAGE_WAITS}, without end. */
	public static final BackOff OUTAGE = OUTAGE_WAITS.unlimited();

	private StoreCalls() {
	}

	/**
	 * Runs a store call, trying it again by {@link #RETRIES} while it throws.
	 * @param <T> the result type
	 * @param call the call
	 * @return its result
	 * @throws RuntimeException the last failure, when all tries failed (or the thread was
	 * interrupted while waiting to try again)
	 */
	public static <T> T withRetries(Supplier<T> call) {
		BackOffExecution retries = RETRIES.start();
		while (true) {
			try {
				return call.get();
			}
			catch (RuntimeException ex) {
				long wait = retries.nextBackOff();
				if (wait == BackOffExecution.STOP || !pause(wait)) {
					throw ex;
				}
			}
		}
	}

	/**
	 * Waits before a retry.
	 * @param millis how long
	 * @return {@code true}, or {@code false} if the thread was interrupted meanwhile (its
	 * interrupt flag set again): then the caller gives up
	 */
	public static boolean pause(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
