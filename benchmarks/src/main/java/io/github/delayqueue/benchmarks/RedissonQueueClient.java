package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Redisson's open-source delayed queue, used as its documentation shows: an
 * {@code RDelayedQueue} in front of an {@code RBlockingQueue}, consumer threads blocked
 * in {@code poll}. Payloads use the string codec, so both queues store the same bytes.
 */
final class RedissonQueueClient implements QueueClient {

	private final RedissonClient redisson;

	private final Map<String, RDelayedQueue<String>> delayedQueues = new ConcurrentHashMap<>();

	private final List<Thread> consumers = new ArrayList<>();

	private volatile boolean running = true;

	RedissonQueueClient(String redisUrl, ConsumerSpec spec) {
		Config config = new Config();
		config.setCodec(StringCodec.INSTANCE);
		config.useSingleServer().setAddress(redisUrl);
		this.redisson = Redisson.create(config);
		for (String topic : spec.topics()) {
			RBlockingQueue<String> ready = this.redisson.getBlockingQueue(topic);
			delayedQueue(topic);
			for (int i = 0; i < spec.threads(); i++) {
				Thread consumer = new Thread(() -> consume(ready, spec.handler()), "redisson-" + topic + "-" + i);
				consumer.setDaemon(true);
				consumer.start();
				this.consumers.add(consumer);
			}
		}
	}

	private RDelayedQueue<String> delayedQueue(String topic) {
		return this.delayedQueues.computeIfAbsent(topic,
				(name) -> this.redisson.getDelayedQueue(this.redisson.<String>getBlockingQueue(name)));
	}

	private void consume(RBlockingQueue<String> ready, PayloadHandler handler) {
		while (this.running) {
			try {
				String payload = ready.poll(1, TimeUnit.SECONDS);
				if (payload != null) {
					handler.handle(payload);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				// Like a resilient consumer: report and go on (Redis may be busy or
				// unreachable for a while).
				if (this.running) {
					System.err.println("Redisson consumer: " + ex);
				}
			}
		}
	}

	@Override
	public void send(String topic, String payload, long dueAtMillis) {
		long delay = Math.max(0, dueAtMillis - System.currentTimeMillis());
		delayedQueue(topic).offer(payload, delay, TimeUnit.MILLISECONDS);
	}

	@Override
	public void sendAll(String topic, List<String> payloads, long[] dueAtMillis) {
		throw new UnsupportedOperationException("RDelayedQueue has no batch offer");
	}

	@Override
	public void close() {
		this.running = false;
		for (Thread consumer : this.consumers) {
			try {
				consumer.join(3000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.delayedQueues.values().forEach(RDelayedQueue::destroy);
		this.redisson.shutdown();
	}

}
