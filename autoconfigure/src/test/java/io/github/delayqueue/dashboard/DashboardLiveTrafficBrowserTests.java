package io.github.delayqueue.dashboard;

import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.test.browser.Chromium;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard of an application at work, in headless Chromium: listeners running,
 * messages sent and delivered while the page is open, some failing into dead letters. The
 * live charts draw the traffic. The screenshots of the overview and a topic
 * ({@code target/dashboard-screenshots/readme-*.png}) are those of the README. Skipped,
 * saying why, without Debian's chromium and chromium-driver.
 */
@SpringBootTest(classes = DashboardLiveTrafficBrowserTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "management.endpoint.delayqueue.access=unrestricted",
				"delay-queue.metrics.lateness-percentiles=0.99", "delay-queue.topics.payment-reminder.partitions=3" })
@Tag("browser")
class DashboardLiveTrafficBrowserTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	@RegisterExtension
	static final Chromium chromium = new Chromium();

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private Shop shop;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@Test
	void theLiveChartsDrawTheTrafficWhileThePageIsOpen() throws IOException {
		for (int i = 0; i < 40; i++) {
			this.template.send(DelayMessage.builder("order-timeout", "{\"order\":\"o-" + (1000 + i) + "\"}")
				.id("o-" + (1000 + i))
				.priority(i % 3)
				.delay(Duration.ofMinutes(30 + i))
				.build());
			this.template.send(DelayMessage.builder("payment-reminder", "{\"invoice\":\"i-" + i + "\"}")
				.id("i-" + i)
				.delay(Duration.ofHours(24).plusMinutes(i))
				.build());
		}
		chromium.open(this.port, "/delay-queue/");
		chromium.shown(By.cssSelector("tr[data-topic='order-timeout']"));
		for (int wave = 0; wave < 4; wave++) {
			int handled = this.shop.timedOut.get();
			for (int i = 0; i < 10 * (wave + 1); i++) {
				this.template.send(DelayMessage.builder("order-timeout", "{\"order\":\"now-" + wave + "-" + i + "\"}")
					.delay(Duration.ofMillis(50L * i))
					.build());
			}
			for (int i = 0; i < 3 + wave; i++) {
				this.template.send(DelayMessage
					.builder("webhook-retry", "{\"url\":\"https://example.com/hooks/" + wave + i + "\"}")
					.id("w-" + wave + "-" + i)
					.delay(Duration.ofMillis(100L * i))
					.build());
			}
			await().atMost(Duration.ofSeconds(20)).until(() -> this.shop.timedOut.get() >= handled + 10);
			int readings = wave + 2;
			await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> readingsDrawn() >= readings);
		}
		chromium.shown(By.cssSelector("#chart-delivered polyline"));
		await().atMost(Duration.ofSeconds(20))
			.ignoreExceptions()
			.until(() -> !chromium.driver()
				.findElement(By.cssSelector("#chart-delivered figcaption strong"))
				.getText()
				.equals("—"));
		chromium.screenshot("readme-overview");
		chromium.open(this.port, "/delay-queue/#/topics/webhook-retry?state=dead");
		chromium.shown(By.cssSelector("table#messages tr[data-id='w-3-0']"));
		// A dead letter's due time is that of its last attempt (headers shown in
		// capitals).
		assertThat(chromium.driver().findElements(By.cssSelector("table#messages th")))
			.extracting((header) -> header.getText().toLowerCase(Locale.ROOT))
			.contains("last due")
			.doesNotContain("due", "partition");
		chromium.screenshot("readme-topic");
		assertThat(chromium.driver().findElements(By.cssSelector("button.action"))).isNotEmpty();
	}

	/** How many readings of the meters the page has drawn. */
	private static int readingsDrawn() {
		return chromium.driver()
			.findElement(By.cssSelector("#chart-lateness polyline"))
			.getAttribute("points")
			.split(" ").length;
	}

	/**
	 * The listeners of a small shop: timeouts handled, webhooks failing into dead
	 * letters.
	 */
	static class Shop {

		final AtomicInteger timedOut = new AtomicInteger();

		@DelayListener(topic = "order-timeout", concurrency = "4")
		void onOrderTimeout(String order) {
			this.timedOut.incrementAndGet();
		}

		@DelayListener(topic = "webhook-retry", maxAttempts = 1)
		void onWebhook(String webhook) {
			throw new IllegalStateException("HTTP 503 from " + webhook);
		}

		@DelayListener(topic = "payment-reminder")
		void onPaymentReminder(String invoice) {
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		Shop shop() {
			return new Shop();
		}

	}

}
