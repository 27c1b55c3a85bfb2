package io.github.delayqueue.dashboard;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.test.browser.Chromium;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard as an operator uses it, in headless Chromium, with real messages in real
 * Redis: the overview, a topic, a message found by id whose payload is a script (shown as
 * text, never run). Needs Debian's {@code chromium} and {@code chromium-driver}
 * ({@code .ci/run} installs them on CI); without them the tests are skipped, saying so.
 * Screenshots of the overview and a topic go to {@code target/dashboard-screenshots}.
 */
@SpringBootTest(classes = DashboardBrowserTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "delay-queue.dashboard.enabled=true")
@Tag("browser")
class DashboardBrowserTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final String SCRIPT_PAYLOAD = "<script>window.injected = true</script><img src=x onerror=\"window.injected = true\">";

	@RegisterExtension
	static final Chromium chromium = new Chromium();

	@Autowired
	private DelayQueueTemplate template;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@Test
	void theOverviewListsEveryTopicWithItsCountsAndShowsTheRedisItRunsOn() throws IOException {
		send("browser-orders", "order-1", "{\"order\":1}", Duration.ofMinutes(30));
		send("browser-orders", "order-2", "{\"order\":2}", Duration.ofMinutes(45));
		send("browser-webhooks", "hook-1", "{\"url\":\"https://example.com\"}", Duration.ofMinutes(5));
		open("/delay-queue/");
		// The page re-renders while it is read: each cell is found again when replaced.
		String row = "tr[data-topic='browser-orders'] td:nth-child(";
		assertThat(chromium.textOf(By.cssSelector(row + "1)"))).isEqualTo("browser-orders");
		assertThat(chromium.textOf(By.cssSelector(row + "2)"))).isEqualTo("1");
		assertThat(chromium.textOf(By.cssSelector(row + "3)"))).isEqualTo("2");
		assertThat(chromium.textOf(By.cssSelector(row + "6)"))).isEqualTo("0");
		assertThat(chromium.textOf(By.id("access"))).isEqualTo("read-only");
		assertThat(chromium.textOf(By.cssSelector("#chart-sent figcaption"))).startsWith("Sent");
		assertThat(chromium.textOf(By.id("redis-mode"))).isEqualTo("standalone · 1 primary");
		assertThat(chromium.driver().findElements(By.cssSelector("#primaries tbody tr"))).hasSize(1);
		chromium.screenshot("overview");
	}

	@Test
	void aTopicShowsItsMessagesInDueOrder() throws IOException {
		send("browser-topic", "first", "a", Duration.ofMinutes(10));
		send("browser-topic", "second", "b", Duration.ofMinutes(20));
		open("/delay-queue/");
		chromium.click(By.cssSelector("tr[data-topic='browser-topic'] a"));
		chromium.shown(By.cssSelector("table#messages tr[data-id='second']"));
		List<String> ids = chromium.driver()
			.findElements(By.cssSelector("table#messages tbody tr"))
			.stream()
			.map((row) -> row.getAttribute("data-id"))
			.toList();
		assertThat(ids).containsExactly("first", "second");
		assertThat(chromium.driver().findElement(By.cssSelector(".tabs a.current")).getText())
			.isEqualTo("scheduled (2)");
		chromium.screenshot("topic");
	}

	@Test
	void aReadOnlyDashboardShowsNoActions() {
		send("browser-read-only", "kept", "x", Duration.ofHours(1));
		open("/delay-queue/#/topics/browser-read-only/messages/kept");
		chromium.shown(By.id("payload"));
		assertThat(chromium.driver().findElements(By.cssSelector("button.action"))).isEmpty();
	}

	@Test
	void aMessageFoundByIdShowsAScriptPayloadAsTextWithoutRunningIt() {
		send("browser-unsafe", "unsafe-1", SCRIPT_PAYLOAD, Duration.ofHours(1));
		open("/delay-queue/");
		chromium.driver().findElement(By.id("find-topic")).sendKeys("browser-unsafe");
		chromium.driver().findElement(By.id("find-id")).sendKeys("unsafe-1");
		chromium.driver().findElement(By.cssSelector("#find button")).click();
		WebElement payload = chromium.shown(By.id("payload"));
		assertThat(payload.getText()).isEqualTo(SCRIPT_PAYLOAD);
		assertThat(payload.findElements(By.xpath("./*"))).isEmpty();
		Object injected = ((JavascriptExecutor) chromium.driver()).executeScript("return window.injected === true");
		assertThat(injected).isEqualTo(Boolean.FALSE);
	}

	@Test
	void aMessageWhoseIdIsTwoDotsIsFound() {
		send("browser-dots", "..", "the payload of dots", Duration.ofHours(1));
		open("/delay-queue/");
		chromium.driver().findElement(By.id("find-topic")).sendKeys("browser-dots");
		chromium.driver().findElement(By.id("find-id")).sendKeys("..");
		chromium.driver().findElement(By.cssSelector("#find button")).click();
		assertThat(chromium.textOf(By.id("payload"))).isEqualTo("the payload of dots");
	}

	@Test
	void aTopicWithASlashInItsNameShowsItsMessages() {
		send("browser/slash", "slash-1", "y", Duration.ofHours(1));
		open("/delay-queue/");
		chromium.click(By.cssSelector("tr[data-topic='browser/slash'] a"));
		chromium.shown(By.cssSelector("table#messages tr[data-id='slash-1']"));
	}

	@Test
	void anUnknownMessageShowsWhatWasNotFound() {
		open("/delay-queue/#/topics/browser-orders/messages/no-such-id");
		WebElement error = chromium.shown(By.cssSelector("#view .error"));
		assertThat(error.getText()).isEqualTo("Topic 'browser-orders' has no message with id 'no-such-id'");
	}

	private void send(String topic, String id, String payload, Duration delay) {
		this.template.send(DelayMessage.builder(topic, payload).id(id).delay(delay).build());
	}

	private void open(String path) {
		chromium.open(this.port, path);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
