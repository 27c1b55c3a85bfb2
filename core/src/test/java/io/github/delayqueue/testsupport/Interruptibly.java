package io.github.delayqueue.testsupport;

import java.util.concurrent.CountDownLatch;

/**
 * Waits of a test's own threads that end early, keeping the interrupt, when the thread is
 * interrupted: a scenario's step, not a wait for a condition (that is Awaitility's).
 */
public final class Interruptibly {

	private Interruptibly() {
	}

	/**
	 * Sleeps, or returns early if interrupted.
	 * @param millis how long
	 */
	public static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Waits for a latch, or returns early if interrupted.
	 * @param latch the latch
	 */
	public static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
