package io.github.delayqueue.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.MessageStore;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The dashboard over large topics: an application with the dashboard on and default
 * settings, one topic of 100k scheduled messages, one of 100k ready ones, and one of 100k
 * scheduled messages in 4 partitions; then the time of each of the dashboard's HTTP reads
 * (the overview, a topic's first, middle and last page, a message by id, the Redis
 * panel), each repeated, from a client on the same machine.
 */
final class DashboardScenario {

	private static final String SCHEDULED = "large-scheduled";

	private static final String READY = "large-ready";

	private static final String PARTITIONED = "large-partitioned";

	private static final int BATCH = 1000;

	private static final int PAGE = 20;

	private DashboardScenario() {
	}

	static Map<String, Object> run(Run run) throws Exception {
		if (run.kind() != QueueClient.Kind.DELAY_QUEUE) {
			return Map.of("supported", false, "why", "no dashboard of its own to measure");
		}
		int messages = run.options().integer("messages", 100_000);
		int repeats = run.options().integer("repeats", 50);
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("spring.data.redis.url", run.redisUrl());
		properties.put("spring.main.banner-mode", "off");
		properties.put("logging.level.root", "WARN");
		properties.put("server.port", "0");
		properties.put("delay-queue.dashboard.enabled", "true");
		properties.put("delay-queue.topics." + PARTITIONED + ".partitions", "4");
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BenchmarkApplication.class)
			.web(WebApplicationType.SERVLET)
			.properties(properties)
			.run()) {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			Instant now = Instant.now();
			long fillStart = System.nanoTime();
			fill(template, SCHEDULED, messages, now.plus(Duration.ofHours(1)));
			fill(template, READY, messages, now.minusSeconds(1));
			fill(template, PARTITIONED, messages, now.plus(Duration.ofHours(1)));
			promoteAll(context.getBean(MessageStore.class));
			long fillMillis = (System.nanoTime() - fillStart) / 1_000_000;
			String base = "http://localhost:" + context.getEnvironment().getProperty("local.server.port")
					+ "/delay-queue/api/";
			HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
			Map<String, String> reads = new LinkedHashMap<>();
			reads.put("overview", "overview");
			reads.put("redis_panel", "redis");
			reads.put("scheduled_first_page", page(SCHEDULED, "scheduled", 0));
			reads.put("scheduled_middle_page", page(SCHEDULED, "scheduled", messages / 2));
			reads.put("scheduled_last_page", page(SCHEDULED, "scheduled", messages - PAGE));
			reads.put("ready_first_page", page(READY, "ready", 0));
			reads.put("ready_middle_page", page(READY, "ready", messages / 2));
			reads.put("ready_last_page", page(READY, "ready", messages - PAGE));
			reads.put("partitioned_first_page", page(PARTITIONED, "scheduled", 0));
			reads.put("partitioned_page_500", page(PARTITIONED, "scheduled", 500 * PAGE - PAGE));
			reads.put("message_by_id", "message?topic=" + SCHEDULED + "&id=" + SCHEDULED + "-" + (messages / 2));
			reads.put("partitioned_message_by_id",
					"message?topic=" + PARTITIONED + "&id=" + PARTITIONED + "-" + (messages / 2));
			// Once each first: compiles the code paths and opens the connections.
			for (String path : reads.values()) {
				time(client, base + path);
			}
			Map<String, Object> millis = new LinkedHashMap<>();
			for (Map.Entry<String, String> read : reads.entrySet()) {
				millis.put(read.getKey(), percentiles(client, base + read.getValue(), repeats));
			}
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("messages_per_topic", messages);
			result.put("fill_ms", fillMillis);
			result.put("repeats", repeats);
			result.put("ms", millis);
			return result;
		}
	}

	private static void fill(DelayQueueTemplate template, String topic, int count, Instant due) {
		List<DelayMessage> batch = new ArrayList<>(BATCH);
		for (int i = 0; i < count; i++) {
			batch.add(DelayMessage.builder(topic, "{\"n\":" + i + "}").id(topic + "-" + i).dueAt(due).build());
			if (batch.size() == BATCH || i == count - 1) {
				template.sendAll(batch);
				batch.clear();
			}
		}
	}

	/** Moves the due messages of the ready topic to its ready list, as a broker would. */
	private static void promoteAll(MessageStore store) throws Exception {
		while (store.topic(READY).promote(BATCH, Duration.ZERO).get().moved() > 0) {
			// again, until nothing is due
		}
	}

	private static String page(String topic, String state, int offset) {
		return "topic?topic=" + topic + "&state=" + state + "&offset=" + offset + "&limit=" + PAGE;
	}

	private static Map<String, Object> percentiles(HttpClient client, String url, int repeats)
			throws IOException, InterruptedException {
		double[] millis = new double[repeats];
		for (int i = 0; i < repeats; i++) {
			millis[i] = time(client, url);
		}
		Arrays.sort(millis);
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("p50", round(millis[(repeats - 1) / 2]));
		result.put("p90", round(millis[(int) Math.ceil(0.9 * repeats) - 1]));
		result.put("max", round(millis[repeats - 1]));
		return result;
	}

	private static double time(HttpClient client, String url) throws IOException, InterruptedException {
		long start = System.nanoTime();
		HttpResponse<byte[]> response = client.send(HttpRequest.newBuilder(URI.create(url)).GET().build(),
				HttpResponse.BodyHandlers.ofByteArray());
		double millis = (System.nanoTime() - start) / 1e6;
		if (response.statusCode() != 200) {
			throw new IllegalStateException(url + " answered " + response.statusCode() + ": "
					+ new String(response.body(), StandardCharsets.UTF_8));
		}
		return millis;
	}

	private static double round(double millis) {
		return Math.round(millis * 100) / 100.0;
	}

}
