package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A topic's handlers on a shared executor: at most its concurrency at once, the rest
 * queued in order; an executor that waits for room is never called under the lock a
 * finishing task needs, and a task it refuses goes to the refusal handler; shut down in
 * two steps, the queued tasks given back unstarted.
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
		ConcurrencyLimitedExecutor<Runnable> handlers = limited(2);
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
		ConcurrencyLimitedExecutor<Runnable> handlers = limited(2);
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
		ConcurrencyLimitedExecutor<Runnable> handlers = limited(1);
		CountDownLatch release = new CountDownLatch(1);
		List<Integer> started = new CopyOnWriteArrayList<>();
		for (int i = 0; i < 20; i++) {
			int task = i;
			handlers.execute(() -> {
				waitFor(release);
				started.add(task);
			});
		}
		release.countDown();
		await().until(() -> started.size() == 20);
		assertThat(started).isSorted();
	}

	@Test
	void shutdownNowDropsQueuedTasksInterruptsRunningOnesAndRefusesNewOnes() throws InterruptedException {
		ConcurrencyLimitedExecutor<Runnable> handlers = limited(1);
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

	@Test
	void shutdownGivesBackTheQueuedTasksWithoutStartingThemAndLetsTheRunningOneFinish() throws InterruptedException {
		ConcurrencyLimitedExecutor<Runnable> handlers = limited(1);
		CountDownLatch release = new CountDownLatch(1);
		List<String> ran = new CopyOnWriteArrayList<>();
		handlers.execute(() -> {
			waitFor(release);
			ran.add("running");
		});
		Runnable queued = () -> ran.add("queued");
		handlers.execute(queued);
		assertThat(handlers.shutdown()).containsExactly(queued);
		release.countDown();
		assertThat(handlers.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
		assertThat(ran).containsExactly("running");
		assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> handlers.execute(queued));
	}

	/**
	 * An executor whose {@code execute} waits for room (one task at a time here) is never
	 * called while the monitor a finishing task needs is held: the second task waits in
	 * {@code execute} only until the first one has finished.
	 */
	@Test
	void anExecutorThatWaitsForRoomGetsItFromTheTaskThatFinishes() throws InterruptedException {
		Semaphore room = new Semaphore(1);
		Executor throttled = (task) -> {
			room.acquireUninterruptibly();
			this.shared.execute(() -> {
				try {
					task.run();
				}
				finally {
					room.release();
				}
			});
		};
		ConcurrencyLimitedExecutor<Runnable> handlers = new ConcurrencyLimitedExecutor<>(throttled, 2, (task, ex) -> {
			throw new AssertionError("Refused " + task, ex);
		});
		CountDownLatch done = new CountDownLatch(2);
		CountDownLatch release = new CountDownLatch(1);
		handlers.execute(() -> {
			waitFor(release);
			done.countDown();
		});
		CompletableFuture<Void> second = CompletableFuture.runAsync(() -> handlers.execute(done::countDown));
		await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5)).until(() -> !second.isDone());
		release.countDown();
		assertThat(done.await(5, TimeUnit.SECONDS)).as("both ran").isTrue();
		second.join();
		handlers.shutdown();
		assertThat(handlers.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void aTaskTheExecutorRefusesGoesToTheRefusalHandlerAndFreesItsPlace() throws InterruptedException {
		List<Runnable> refused = new CopyOnWriteArrayList<>();
		AtomicBoolean full = new AtomicBoolean(true);
		Executor sometimesFull = (task) -> {
			if (full.get()) {
				throw new RejectedExecutionException("Full");
			}
			this.shared.execute(task);
		};
		ConcurrencyLimitedExecutor<Runnable> handlers = new ConcurrencyLimitedExecutor<>(sometimesFull, 1,
				(task, ex) -> refused.add(task));
		Runnable first = () -> {
		};
		handlers.execute(first);
		assertThat(refused).containsExactly(first);
		assertThat(handlers.tasks()).isZero();
		full.set(false);
		CountDownLatch ran = new CountDownLatch(1);
		handlers.execute(ran::countDown);
		assertThat(ran.await(5, TimeUnit.SECONDS)).as("its place was free again").isTrue();
	}

	@Test
	void aTaskTheExecutorCannotStartForWantOfAThreadIsRefusedAndFreesItsPlace() throws InterruptedException {
		List<Throwable> failures = new CopyOnWriteArrayList<>();
		AtomicBoolean noThreads = new AtomicBoolean(true);
		Executor outOfThreads = (task) -> {
			if (noThreads.get()) {
				throw new OutOfMemoryError("unable to create native thread");
			}
			this.shared.execute(task);
		};
		ConcurrencyLimitedExecutor<Runnable> handlers = new ConcurrencyLimitedExecutor<>(outOfThreads, 1,
				(task, ex) -> failures.add(ex));
		handlers.execute(() -> {
		});
		assertThat(failures).singleElement().isInstanceOf(OutOfMemoryError.class);
		assertThat(handlers.tasks()).isZero();
		noThreads.set(false);
		CountDownLatch ran = new CountDownLatch(1);
		handlers.execute(ran::countDown);
		assertThat(ran.await(5, TimeUnit.SECONDS)).as("its place was free again").isTrue();
	}

	private ConcurrencyLimitedExecutor<Runnable> limited(int concurrency) {
		return new ConcurrencyLimitedExecutor<>(this.shared, concurrency, (task, ex) -> {
			throw new AssertionError("Refused " + task, ex);
		});
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
