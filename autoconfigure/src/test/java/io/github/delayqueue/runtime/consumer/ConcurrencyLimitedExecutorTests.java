package io.github.delayqueue.runtime.consumer;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A topic's handlers on a shared executor: at most its concurrency at once, the rest
 * queued in order, and shut down like a thread pool.
 */
class ConcurrencyLimitedExecutorTests {

	private final ExecutorService shared = Executors.newCachedThreadPool();

	@AfterEach
	void stopSharedThreads() {
		this.shared.shutdownNow();
	}

	@Test
	void queuedTasksRunOnTheThreadsAlreadyWorkingSoAPoolStartsNoThreadPerTask() throws InterruptedException {
		Set<String> threads = ConcurrentHashMap.newKeySet();
		ConcurrencyLimitedExecutor handlers = new ConcurrencyLimitedExecutor(this.shared, 2);
		CountDownLatch release = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(100);
		for (int i = 0; i < 100; i++) {
			handlers.execute(() -> {
				threads.add(Thread.currentThread().getName());
				waitFor(release);
				done.countDown();
			});
		}
		release.countDown();
		assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(threads).hasSize(2);
	}

	@Test
	void runsAtMostItsConcurrencyAtOnceAndTheRestInOrder() throws InterruptedException {
		ConcurrencyLimitedExecutor handlers = new ConcurrencyLimitedExecutor(this.shared, 2);
		CountDownLatch release = new CountDownLatch(1);
		List<Integer> started = new CopyOnWriteArrayList<>();
		for (int i = 0; i < 5; i++) {
			int task = i;
			handlers.execute(() -> {
				started.add(task);
				waitFor(release);
			});
		}
		await().until(() -> started.size() == 2);
		assertThat(started).containsExactlyInAnyOrder(0, 1);
		release.countDown();
		await().until(() -> started.size() == 5);
		assertThat(started.subList(2, 5)).containsExactlyInAnyOrder(2, 3, 4);
		handlers.shutdown();
		assertThat(handlers.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void queuedTasksStartInTheOrderTheyCame() throws InterruptedException {
		ConcurrencyLimitedExecutor handlers = new ConcurrencyLimitedExecutor(this.shared, 1);
		List<Integer> started = new CopyOnWriteArrayList<>();
		for (int i = 0; i < 20; i++) {
			int task = i;
			handlers.execute(() -> started.add(task));
		}
		handlers.shutdown();
		assertThat(handlers.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
		assertThat(started).isSorted().hasSize(20);
	}

	@Test
	void shutdownNowDropsQueuedTasksInterruptsRunningOnesAndRefusesNewOnes() throws InterruptedException {
		ConcurrencyLimitedExecutor handlers = new ConcurrencyLimitedExecutor(this.shared, 1);
		CountDownLatch interrupted = new CountDownLatch(1);
		handlers.execute(() -> {
			try {
				Thread.sleep(60_000);
			}
			catch (InterruptedException ex) {
				interrupted.countDown();
			}
		});
		Runnable queued = () -> {
		};
		handlers.execute(queued);
		assertThat(handlers.shutdownNow()).containsExactly(queued);
		assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
		assertThat(handlers.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
		assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> handlers.execute(queued));
	}

	private static void waitFor(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
