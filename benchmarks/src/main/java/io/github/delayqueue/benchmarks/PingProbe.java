package io.github.delayqueue.benchmarks;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * A side client that PINGs Redis every 10 ms and remembers the slowest answer: a script
 * that holds Redis busy shows up here as a stall.
 */
final class PingProbe implements AutoCloseable {

	private static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

	private final AtomicLong slowestNanos = new AtomicLong();

	private final AtomicLong pings = new AtomicLong();

	private final AtomicLong stalls = new AtomicLong();

	PingProbe(String url) {
		this.client = RedisClient.create(url);
		this.connection = this.client.connect();
		this.timer.scheduleAtFixedRate(this::ping, 0, 10, TimeUnit.MILLISECONDS);
	}

	private void ping() {
		long start = System.nanoTime();
		this.connection.sync().ping();
		long took = System.nanoTime() - start;
		this.pings.incrementAndGet();
		this.slowestNanos.accumulateAndGet(took, Math::max);
		if (took > STALL_NANOS) {
			this.stalls.incrementAndGet();
		}
	}

	double slowestMillis() {
		return this.slowestNanos.get() / 1e6;
	}

	long pings() {
		return this.pings.get();
	}

	/**
	 * @return how many pings took longer than 5 ms
	 */
	long stalls() {
		return this.stalls.get();
	}

	@Override
	public void close() {
		this.timer.shutdownNow();
		this.connection.close();
		this.client.shutdown();
	}

}
