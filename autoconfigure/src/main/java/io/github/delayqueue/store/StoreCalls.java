package io.github.delayqueue.store;

import java.time.Duration;
import java.util.function.Supplier;

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;

/**
 * The one rule for calling the store again after a failure: three tries, 100 ms and then
 * 200 ms apart, with no wait after the last. For calls that end a lease or send what a
 * transaction held back, where giving up means the message is delivered again or logged
 * as not sent. {@link #withRetries(Supplier)} applies it to a call that waits for Redis;
 * a caller that does not wait follows it with {@link #TRIES} and
 * {@link #delayBefore(int)}.
 */
public final class StoreCalls {

	/** How many times a call is made at most. */
	public static final int TRIES = 3;

	private static final Duration FIRST_DELAY = Duration.ofMillis(100);

	private static final int MULTIPLIER = 2;

	private static final RetryTemplate RETRIES = new RetryTemplate(RetryPolicy.builder()
		.maxRetries(TRIES - 1)
		.delay(FIRST_DELAY)
		.multiplier(MULTIPLIER)
		.includes(RuntimeException.class)
		.build());

	private StoreCalls() {
	}

	/**
	 * How long to wait before trying a failed call again.
	 * @param retry which retry: 1 for the first, up to {@code TRIES - 1}
	 * @return the wait
	 */
	public static Duration delayBefore(int retry) {
		if (retry < 1 || retry >= TRIES) {
			throw new IllegalArgumentException("A call is tried again 1 to " + (TRIES - 1) + " times, not " + retry);
		}
		return FIRST_DELAY.multipliedBy((long) Math.pow(MULTIPLIER, retry - 1));
	}

	/**
	 * Runs a store call, trying again twice if it throws.
	 * @param <T> the result type
	 * @param call the call
	 * @return its result
	 * @throws RuntimeException the last failure, when all three tries failed
	 */
	public static <T> T withRetries(Supplier<T> call) {
		try {
			return RETRIES.execute(call::get);
		}
		catch (RetryException ex) {
			if (ex.getLastException() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new IllegalStateException("Store call failed", ex.getLastException());
		}
	}

}
