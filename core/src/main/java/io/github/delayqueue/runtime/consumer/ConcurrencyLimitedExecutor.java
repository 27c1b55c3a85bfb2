package io.github.delayqueue.runtime.consumer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * One topic's handlers on an executor shared by all topics (the runtime's pool, virtual
 * threads, or the application's own): runs at most {@code concurrency} of its tasks at
 * once and queues the rest, in order. It never calls the executor while holding its own
 * monitor, which a finishing task takes: an executor whose {@code execute} waits for room
 * (a concurrency throttle) delays the caller, never the tasks that would make room. A
 * task the executor refuses (it throws) goes to the refusal handler, and the next queued
 * task is tried. Shut down in two steps: {@link #shutdown()} refuses new tasks and gives
 * back the queued ones, not started, while running ones go on; {@link #shutdownNow()}
 * interrupts the running ones.
 *
 * @param <T> the type of the tasks
 */
final class ConcurrencyLimitedExecutor<T extends Runnable> {

	private final Executor executor;

	private final int concurrency;

	private final BiConsumer<T, Throwable> refused;

	private final Queue<T> queued = new ArrayDeque<>();

	private final Set<Thread> running = new HashSet<>();

	/** Tasks handed to the executor and not finished. */
	private int started;

	private boolean shutdown;

	/**
	 * Set by {@link #shutdownNow()}: a task that starts after it is interrupted at once.
	 */
	private boolean interrupting;

	/**
	 * Creates an executor.
	 * @param executor the shared executor
	 * @param concurrency the most tasks running at once
	 * @param refused takes each task the executor refused, and what it threw, on the
	 * thread that handed the task over, without this executor's monitor; it must not
	 * throw
	 */
	ConcurrencyLimitedExecutor(Executor executor, int concurrency, BiConsumer<T, Throwable> refused) {
		this.executor = executor;
		this.concurrency = concurrency;
		this.refused = refused;
	}

	/**
	 * Runs a task when fewer than the concurrency run, in the order tasks came.
	 * @param task the task
	 * @throws RejectedExecutionException if shut down
	 */
	void execute(T task) {
		synchronized (this) {
			if (this.shutdown) {
				throw new RejectedExecutionException("Handlers are shut down");
			}
			this.queued.add(task);
		}
		startQueued();
	}

	/**
	 * Hands queued tasks to the executor while fewer than the concurrency are started,
	 * each call made without the monitor.
	 */
	private void startQueued() {
		while (true) {
			T task;
			synchronized (this) {
				if (this.started >= this.concurrency || this.queued.isEmpty()) {
					return;
				}
				task = this.queued.poll();
				this.started++;
			}
			AtomicBoolean ran = new AtomicBoolean();
			try {
				this.executor.execute(() -> {
					ran.set(true);
					run(task);
				});
			}
			catch (RuntimeException | Error ex) {
				if (ran.get()) {
					// Run on this thread (a caller-runs executor), which already gave
					// its place back: what it threw is the task's, not a refusal.
					throw ex;
				}
				// An Error too, such as a thread that could not be created: the task is
				// handed back, and its place given up, or the topic's handlers would
				// stall.
				synchronized (this) {
					this.started--;
					notifyAll();
				}
				this.refused.accept(task, ex);
			}
		}
	}

	/**
	 * Runs a task and then, on the same thread, the tasks queued meanwhile: handing each
	 * to the executor from a thread that is still busy would make a pool start a thread
	 * per task.
	 */
	private void run(T first) {
		Thread current = Thread.currentThread();
		T task = first;
		while (task != null) {
			synchronized (this) {
				this.running.add(current);
				if (this.interrupting) {
					current.interrupt();
				}
			}
			try {
				task.run();
			}
			finally {
				synchronized (this) {
					this.running.remove(current);
					if (!this.interrupting) {
						// An interrupt meant for the task just run must not reach the
						// next one.
						Thread.interrupted();
					}
					task = this.queued.poll();
					if (task == null) {
						this.started--;
					}
					notifyAll();
				}
			}
		}
	}

	/**
	 * @return how many tasks are running or queued
	 */
	synchronized int tasks() {
		return this.started + this.queued.size();
	}

	/**
	 * Refuses new tasks and takes the queued ones out, not started; running ones go on.
	 * @return the tasks that were queued, in order
	 */
	synchronized List<T> shutdown() {
		this.shutdown = true;
		List<T> notStarted = new ArrayList<>(this.queued);
		this.queued.clear();
		notifyAll();
		return notStarted;
	}

	/**
	 * Shuts down and interrupts the running tasks; a task the executor starts later is
	 * interrupted at once.
	 * @return the tasks that were queued, in order
	 */
	synchronized List<T> shutdownNow() {
		List<T> notStarted = shutdown();
		this.interrupting = true;
		this.running.forEach(Thread::interrupt);
		return notStarted;
	}

	/**
	 * @return whether shut down, and no task runs or waits for the executor any more
	 */
	synchronized boolean isTerminated() {
		return this.shutdown && this.started == 0;
	}

	/**
	 * Waits until shut down and no task runs, at most a given time.
	 * @param timeout the longest wait
	 * @param unit its unit
	 * @return whether it terminated
	 * @throws InterruptedException if interrupted while waiting
	 */
	synchronized boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
		long deadline = System.nanoTime() + unit.toNanos(timeout);
		while (!isTerminated()) {
			long left = deadline - System.nanoTime();
			if (left <= 0) {
				return false;
			}
			TimeUnit.NANOSECONDS.timedWait(this, left);
		}
		return true;
	}

}
