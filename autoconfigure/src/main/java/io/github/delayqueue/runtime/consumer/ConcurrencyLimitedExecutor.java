package io.github.delayqueue.runtime.consumer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One topic's handlers on an executor shared by all topics (virtual threads, or the
 * application's own): runs at most {@code concurrency} of its tasks at once and queues
 * the rest, in order. Shut down like a thread pool: queued tasks still run after
 * {@link #shutdown()}, none after {@link #shutdownNow()}, which also interrupts the
 * running ones.
 */
final class ConcurrencyLimitedExecutor extends AbstractExecutorService {

	private final Executor executor;

	private final int concurrency;

	private final Queue<Runnable> queued = new ArrayDeque<>();

	private final Set<Thread> running = new HashSet<>();

	private int started;

	private boolean shutdown;

	/**
	 * Set by {@link #shutdownNow()}: a task that starts after it is interrupted at once.
	 */
	private boolean interrupting;

	ConcurrencyLimitedExecutor(Executor executor, int concurrency) {
		this.executor = executor;
		this.concurrency = concurrency;
	}

	@Override
	public synchronized void execute(Runnable task) {
		if (this.shutdown) {
			throw new RejectedExecutionException("Handlers are shut down");
		}
		this.queued.add(task);
		startQueued();
	}

	private void startQueued() {
		while (this.started < this.concurrency && !this.queued.isEmpty()) {
			Runnable task = this.queued.poll();
			this.started++;
			try {
				this.executor.execute(() -> run(task));
			}
			catch (RejectedExecutionException ex) {
				this.started--;
				throw ex;
			}
		}
	}

	/**
	 * Runs a task and then, on the same thread, the tasks queued meanwhile: handing each
	 * to the executor from a thread that is still busy would make a pool start a thread
	 * per task.
	 */
	private void run(Runnable first) {
		Thread current = Thread.currentThread();
		Runnable task = first;
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

	@Override
	public synchronized void shutdown() {
		this.shutdown = true;
	}

	@Override
	public synchronized List<Runnable> shutdownNow() {
		this.shutdown = true;
		this.interrupting = true;
		List<Runnable> notRun = new ArrayList<>(this.queued);
		this.queued.clear();
		this.running.forEach(Thread::interrupt);
		return notRun;
	}

	@Override
	public synchronized boolean isShutdown() {
		return this.shutdown;
	}

	@Override
	public synchronized boolean isTerminated() {
		return this.shutdown && this.started == 0 && this.queued.isEmpty();
	}

	@Override
	public synchronized boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
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
