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
 * as not sent.
 */
public final class StoreCalls {

	private static final RetryTemplate RETRIES = new RetryTemplate(RetryPolicy.builder()
		.maxRetries(2)
		.delay(Duration.ofMillis(100))
		.multiplier(2)
		.includes(RuntimeException.class)
		.build());

	private StoreCalls() {
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
