package io.github.delayqueue.benchmarks;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * This project's queue, started the way users start it: a Spring Boot application with
 * the starter, {@code application.yml}-style properties and {@code @DelayListener}
 * methods.
 */
final class DelayQueueClient implements QueueClient {

	private final ConfigurableApplicationContext context;

	/** Most asynchronous sends on their way at once. */

	private final DelayQueueTemplate template;

	private int maxOnTheirWay = 1000;

	private Semaphore onTheirWay = new Semaphore(this.maxOnTheirWay);

	private final AtomicReference<Throwable> failed = new AtomicReference<>();

	DelayQueueClient(String redisUrl, ConsumerSpec consumers, Map<String, String> properties) {
		Map<String, Object> all = new LinkedHashMap<>();
		all.put("spring.data.redis.url", redisUrl);
		all.put("spring.main.banner-mode", "off");
		all.put("logging.level.root", "WARN");
		all.put("delay-queue.listener.concurrency", Math.max(1, consumers.threads()));
		all.putAll(properties);
		List<Class<?>> sources = new ArrayList<>(List.of(BenchmarkApplication.class));
		BenchmarkListeners.add(consumers.topics(), sources, all);
		this.context = new SpringApplicationBuilder(sources.toArray(Class[]::new)).web(WebApplicationType.NONE)
			.properties(all)
			.initializers(
					(context) -> context.getBeanFactory().registerSingleton("benchmarkHandler", consumers.handler()))
			.run();
		this.template = this.context.getBean(DelayQueueTemplate.class);
	}

	@Override
	public void send(String topic, String payload, long dueAtMillis) {
		this.template.sendAt(topic, payload, Instant.ofEpochMilli(dueAtMillis));
	}

	@Override
	public void limitSendsOnTheirWay(int max) {
		if (max < 1) {
			throw new IllegalArgumentException("--on-their-way must be at least 1, got " + max);
		}
		this.maxOnTheirWay = max;
		this.onTheirWay = new Semaphore(max);
	}

	@Override
	public void sendAsync(String topic, String payload, long dueAtMillis) {
		Semaphore onTheirWay = this.onTheirWay;
		onTheirWay.acquireUninterruptibly();
		this.template.sendAsync(DelayMessage.builder(topic, payload).dueAt(Instant.ofEpochMilli(dueAtMillis)).build())
			.whenComplete((result, failure) -> {
				if (failure != null) {
					this.failed.compareAndSet(null, failure);
				}
				onTheirWay.release();
			});
	}

	@Override
	public void awaitSends() {
		this.onTheirWay.acquireUninterruptibly(this.maxOnTheirWay);
		this.onTheirWay.release(this.maxOnTheirWay);
		Throwable failure = this.failed.getAndSet(null);
		if (failure != null) {
			throw new IllegalStateException("An asynchronous send failed", failure);
		}
	}

	@Override
	public void sendAll(String topic, List<String> payloads, long[] dueAtMillis) {
		List<DelayMessage> messages = new ArrayList<>(payloads.size());
		for (int i = 0; i < payloads.size(); i++) {
			messages
				.add(DelayMessage.builder(topic, payloads.get(i)).dueAt(Instant.ofEpochMilli(dueAtMillis[i])).build());
		}
		this.template.sendAll(messages);
	}

	@Override
	public void sendAll(String topic, List<String> payloads, long[] dueAtMillis, List<String> groups) {
		List<DelayMessage> messages = new ArrayList<>(payloads.size());
		for (int i = 0; i < payloads.size(); i++) {
			DelayMessage.Builder message = DelayMessage.builder(topic, payloads.get(i))
				.dueAt(Instant.ofEpochMilli(dueAtMillis[i]));
			String group = groups.get(i);
			messages.add(((group != null) ? message.group(group) : message).build());
		}
		this.template.sendAll(messages);
	}

	@Override
	public void pause(String topic) {
		this.context.getBean(DelayQueueRuntime.class).pause(topic);
	}

	@Override
	public void resume(String topic) {
		this.context.getBean(DelayQueueRuntime.class).resume(topic);
	}

	@Override
	public void close() {
		this.context.close();
	}

}
