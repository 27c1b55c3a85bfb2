package io.github.delayqueue.metrics;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.testsupport.QueueContexts;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every meter that the shipped Grafana dashboard and Prometheus alert rules
 * ({@code docs/monitoring}) query is one that an application really publishes, under the
 * name Micrometer's Prometheus registry gives it: an application that sends, delivers,
 * retries and dead-letters, scraped.
 */
@SpringBootTest(classes = MonitoringQueriesTests.App.class)
class MonitoringQueriesTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final Pattern METER = Pattern.compile("\\bdelay_queue_[a-z_]+");

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private PrometheusMeterRegistry registry;

	@Autowired
	private Listeners listeners;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@Test
	void everyQueryOfTheMonitoringFilesNamesAPublishedMeter() throws IOException {
		this.template.send(DelayMessage.builder("monitored", "fine").delay(Duration.ZERO).build());
		this.template.send(DelayMessage.builder("monitored-failing", "broken").delay(Duration.ZERO).build());
		this.template.send(DelayMessage.builder("monitored", "later").delay(Duration.ofHours(1)).build());
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.listeners.handled.contains("fine") && this.listeners.failures.size() >= 2);
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.registry.scrape().contains("delay_queue_dead_lettered_total"));
		Set<String> published = publishedNames(this.registry.scrape());
		Set<String> queried = new TreeSet<>();
		queried.addAll(meterNames(monitoringFile("grafana-dashboard.json")));
		queried.addAll(meterNames(monitoringFile("prometheus-alerts.yml")));
		assertThat(queried).hasSizeGreaterThanOrEqualTo(8);
		assertThat(published).containsAll(queried);
	}

	private static Set<String> publishedNames(String scrape) {
		Set<String> names = new TreeSet<>();
		for (String line : scrape.split("\n")) {
			if (!line.startsWith("#") && !line.isBlank()) {
				int end = line.indexOf('{');
				names.add(line.substring(0, (end >= 0) ? end : line.indexOf(' ')));
			}
		}
		return names;
	}

	private static Set<String> meterNames(String text) {
		Set<String> names = new TreeSet<>();
		Matcher matcher = METER.matcher(text);
		while (matcher.find()) {
			names.add(matcher.group());
		}
		return names;
	}

	private static String monitoringFile(String name) throws IOException {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			Path file = dir.resolve("docs/monitoring").resolve(name);
			if (Files.exists(file)) {
				return Files.readString(file, StandardCharsets.UTF_8);
			}
		}
		throw new IllegalStateException("docs/monitoring/" + name + " not found above " + Path.of("").toAbsolutePath());
	}

	/**
	 * One listener that handles its messages, one that always fails, twice, then
	 * dead-letters.
	 */
	static class Listeners {

		final CopyOnWriteArrayList<String> handled = new CopyOnWriteArrayList<>();

		final CopyOnWriteArrayList<String> failures = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "monitored")
		void onMessage(String payload) {
			this.handled.add(payload);
		}

		@DelayListener(topic = "monitored-failing", maxAttempts = 2)
		void onFailingMessage(String payload) {
			this.failures.add(payload);
			throw new IllegalStateException("Always fails: " + payload);
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		PrometheusMeterRegistry prometheusMeterRegistry() {
			return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

}
