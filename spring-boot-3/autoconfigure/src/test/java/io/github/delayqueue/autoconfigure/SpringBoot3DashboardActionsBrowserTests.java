package io.github.delayqueue.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.test.browser.Chromium;
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
 * The dashboard's actions on Spring Boot 3.5 in headless Chromium, with the endpoint's
 * access unrestricted: the overview shows the Redis it runs on, a dead letter replayed
 * from its page is delivered, and a listener is paused and resumed. Skipped, saying why,
 * without Debian's chromium and chromium-driver.
 */
@SpringBootTest(classes = SpringBoot3DashboardActionsBrowserTests.App.class,
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "management.endpoint.delayqueue.access=unrestricted" })
@Tag("browser")
class SpringBoot3DashboardActionsBrowserTests {

	@RegisterExtension
	static final Chromium chromium = new Chromium();

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private DelayQueueRuntime runtime;

	@Autowired
	private Invoices invoices;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		TestRedisProperties.register(registry);
	}

	@Test
	void anOperatorReplaysADeadLetterAndPausesAndResumesAListener() {
		this.template.send(DelayMessage.builder("boot3-invoices", "inv-9").id("inv-9").delay(Duration.ZERO).build());
		await().atMost(Duration.ofSeconds(10)).until(() -> this.invoices.refused.contains("inv-9"));
		chromium.open(this.port, "/delay-queue/");
		assertThat(chromium.textOf(By.id("redis-mode"))).isEqualTo("standalone · 1 primary");
		chromium.open(this.port, "/delay-queue/#/topics/boot3-invoices?state=dead");
		chromium.awaitText(By.cssSelector(".tabs a.current"), "dead (1)");
		this.invoices.refusing = false;
		chromium.click(By.cssSelector("table#messages tr[data-id='inv-9'] a"));
		chromium.click(By.xpath("//button[text()='Replay']"));
		chromium.confirm();
		chromium.awaitText(By.id("notice"), "inv-9: replayed, due now");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.invoices.delivered.contains("inv-9"));
		chromium.open(this.port, "/delay-queue/#/topics/boot3-invoices");
		chromium.click(By.xpath("//p[@id='listener']/button[text()='Pause']"));
		chromium.shown(By.xpath("//p[@id='listener']/button[text()='Resume']"));
		assertThat(this.runtime.getListenerStates()).containsEntry("boot3-invoices", ListenerState.PAUSED);
		chromium.click(By.xpath("//p[@id='listener']/button[text()='Resume']"));
		chromium.shown(By.xpath("//p[@id='listener']/button[text()='Pause']"));
		assertThat(this.runtime.getListenerStates()).containsEntry("boot3-invoices", ListenerState.RUNNING);
	}

	/** Refuses every invoice while told to, on its only attempt, so that it dies. */
	static class Invoices {

		final List<String> refused = new CopyOnWriteArrayList<>();

		final List<String> delivered = new CopyOnWriteArrayList<>();

		volatile boolean refusing = true;

		@DelayListener(topic = "boot3-invoices", maxAttempts = 1)
		void onInvoice(String payload) {
			if (this.refusing) {
				this.refused.add(payload);
				throw new IllegalStateException("Billing refused " + payload);
			}
			this.delivered.add(payload);
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		Invoices invoices() {
			return new Invoices();
		}

	}

}
