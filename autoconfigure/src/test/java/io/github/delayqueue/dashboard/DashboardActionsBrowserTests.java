package io.github.delayqueue.dashboard;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.sun.net.httpserver.HttpServer;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.runtime.ListenerState;
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
 * Dashboard actions as an operator takes them, in headless Chromium, with the endpoint's
 * access unrestricted: a dead letter replayed and then delivered, a listener paused and
 * resumed; and what another site's page cannot do in the same browser. Skipped, saying
 * why, without Debian's chromium and chromium-driver.
 */
@SpringBootTest(classes = DashboardActionsBrowserTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "management.endpoint.delayqueue.access=unrestricted" })
@Tag("browser")
class DashboardActionsBrowserTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	@RegisterExtension
	static final Chromium chromium = new Chromium();

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private DelayQueueRuntime runtime;

	@Autowired
	private DelayQueueSchedules schedules;

	@Autowired
	private DelayQueueGroups groups;

	@Autowired
	private RefusingListener listener;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@Test
	void aDeadLetterReplayedFromItsPageIsDeliveredAgain() throws IOException {
		this.template.send(DelayMessage.builder("browser-refused", "pay-7").id("pay-7").delay(Duration.ZERO).build());
		await().atMost(Duration.ofSeconds(10)).until(() -> this.listener.refused.contains("pay-7"));
		chromium.open(this.port, "/delay-queue/#/topics/browser-refused?state=dead");
		chromium.awaitText(By.cssSelector(".tabs a.current"), "dead (1)");
		chromium.screenshot("dead-letters");
		this.listener.refusing = false;
		chromium.click(By.cssSelector("table#messages tr[data-id='pay-7'] a"));
		chromium.click(By.xpath("//button[text()='Replay']"));
		chromium.confirm();
		chromium.awaitText(By.id("notice"), "pay-7: replayed, due now");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.listener.delivered.contains("pay-7"));
	}

	@Test
	void aScheduleIsListedWithItsNextTickAndPausedResumedAndTriggeredFromTheOverview() throws IOException {
		this.schedules.save(
				Schedule.cron("browser-nightly", "browser-paused", "0 0 2 * * *").withZone(ZoneId.of("Europe/Berlin")));
		chromium.open(this.port, "/delay-queue/#/");
		String row = "//section[@id='schedules']//tr[@data-schedule='browser-nightly']";
		chromium.awaitText(By.xpath(row + "/td[3]"), "0 0 2 * * * (Europe/Berlin)");
		chromium.screenshot("schedules");
		chromium.click(By.xpath(row + "//button[text()='Pause']"));
		chromium.shown(By.xpath(row + "//button[text()='Resume']"));
		assertThat(this.schedules.get("browser-nightly").orElseThrow().paused()).isTrue();
		chromium.click(By.xpath(row + "//button[text()='Resume']"));
		chromium.shown(By.xpath(row + "//button[text()='Pause']"));
		assertThat(this.schedules.get("browser-nightly").orElseThrow().paused()).isFalse();
		chromium.click(By.xpath(row + "//button[text()='Trigger now']"));
		chromium.confirm();
		await().atMost(Duration.ofSeconds(10))
			.ignoreExceptions()
			.until(() -> chromium.driver().findElement(By.id("notice")).getText(),
					(text) -> text.matches("browser-nightly: message browser-nightly~[0-9]+~[0-9]{1,5} sent"));
	}

	@Test
	void aListenerIsPausedAndResumedFromItsTopicPage() {
		chromium.open(this.port, "/delay-queue/#/topics/browser-paused");
		chromium.click(By.xpath("//p[@id='listener']/button[text()='Pause']"));
		chromium.shown(By.xpath("//p[@id='listener']/button[text()='Resume']"));
		assertThat(this.runtime.getListenerStates()).containsEntry("browser-paused", ListenerState.PAUSED);
		chromium.click(By.xpath("//p[@id='listener']/button[text()='Resume']"));
		chromium.shown(By.xpath("//p[@id='listener']/button[text()='Pause']"));
		assertThat(this.runtime.getListenerStates()).containsEntry("browser-paused", ListenerState.RUNNING);
	}

	@Test
	void aGroupFoundByNameIsPausedAndResumedFromItsTopicPage() throws IOException {
		this.template.send(DelayMessage.builder("browser-groups", "hook")
			.id("hook-1")
			.group("shop-17")
			.delay(Duration.ofHours(1))
			.build());
		chromium.open(this.port, "/delay-queue/#/topics/browser-groups?group=shop-17");
		chromium.click(By.xpath("//p[@id='group-actions']/button[text()='Pause group']"));
		chromium.confirm();
		chromium.awaitText(By.id("notice"), "shop-17: group paused until resumed");
		chromium.awaitText(By.id("group-facts"), "shop-17: 0 ready · 0 in flight · paused until resumed");
		chromium.screenshot("group-paused");
		assertThat(this.groups.group("browser-groups", "shop-17").paused()).isTrue();
		chromium.awaitText(By.id("paused-groups"), "1 group paused: shop-17 (until resumed)");
		chromium.click(By.xpath("//p[@id='group-actions']/button[text()='Resume group']"));
		chromium.awaitText(By.id("notice"), "shop-17: group resumed");
		chromium.shown(By.xpath("//p[@id='group-actions']/button[text()='Pause group']"));
		assertThat(this.groups.group("browser-groups", "shop-17").paused()).isFalse();
	}

	@Test
	void anotherSitesFormAndScriptCannotCancelAMessage() throws IOException {
		this.template
			.send(DelayMessage.builder("browser-targets", "a").id("by-form").delay(Duration.ofHours(1)).build());
		this.template
			.send(DelayMessage.builder("browser-targets", "b").id("by-script").delay(Duration.ofHours(1)).build());
		String actions = "http://localhost:" + this.port + "/delay-queue/api/message/actions?topic=browser-targets&id=";
		String page = "<!doctype html><html><head><title>other site</title></head><body>"
				+ "<form id='f' method='POST' enctype='text/plain' action='" + actions + "by-form'>"
				+ "<input name='{\"action\":\"cancel\",\"x\":\"' value='\"}'></form><script>" + "fetch('" + actions
				+ "by-script', {method: 'POST', credentials: 'include', headers:"
				+ " {'X-Delay-Queue-Dashboard': '1', 'Content-Type': 'application/json'},"
				+ " body: '{\"action\":\"cancel\"}'})" + ".then((r) => { document.title = 'answered ' + r.status; })"
				+ ".catch(() => { document.title = 'blocked'; })"
				+ ".finally(() => document.getElementById('f').submit());" + "</script></body></html>";
		HttpServer otherSite = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		otherSite.createContext("/", (exchange) -> {
			byte[] body = page.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
			exchange.sendResponseHeaders(200, body.length);
			exchange.getResponseBody().write(body);
			exchange.close();
		});
		otherSite.start();
		try {
			chromium.driver().get("http://127.0.0.1:" + otherSite.getAddress().getPort() + "/");
			// The form's POST leaves the page for the dashboard's refusal.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> chromium.driver().getCurrentUrl().contains("/api/message/actions"));
			assertThat(chromium.driver().getPageSource()).contains("Refused");
		}
		finally {
			otherSite.stop(0);
		}
		assertThat(this.template.cancel("browser-targets", "by-form")).as("still pending after the form").isTrue();
		assertThat(this.template.cancel("browser-targets", "by-script")).as("still pending after the script").isTrue();
	}

	/** Refuses every message while told to, on its only attempt, so that it dies. */
	static class RefusingListener {

		final List<String> refused = new CopyOnWriteArrayList<>();

		final List<String> delivered = new CopyOnWriteArrayList<>();

		volatile boolean refusing = true;

		@DelayListener(topic = "browser-refused", maxAttempts = 1)
		void onPayment(String payload) {
			if (this.refusing) {
				this.refused.add(payload);
				throw new IllegalStateException("Payment service refused " + payload);
			}
			this.delivered.add(payload);
		}

		@DelayListener(topic = "browser-paused")
		void onAnything(String payload) {
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		RefusingListener refusingListener() {
			return new RefusingListener();
		}

	}

}
