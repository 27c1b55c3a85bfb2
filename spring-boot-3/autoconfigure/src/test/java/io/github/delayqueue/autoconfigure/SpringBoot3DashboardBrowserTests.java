package io.github.delayqueue.autoconfigure;

import java.time.Duration;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.test.browser.Chromium;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;

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
 * The dashboard on Spring Boot 3.5 in headless Chromium: the overview lists a topic, and
 * a message found by id shows a script payload as text without running it. Skipped,
 * saying why, without Debian's chromium and chromium-driver.
 */
@SpringBootTest(classes = SpringBoot3DashboardBrowserTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "delay-queue.dashboard.enabled=true")
@Tag("browser")
class SpringBoot3DashboardBrowserTests {

	private static final String SCRIPT_PAYLOAD = "<img src=x onerror=\"window.injected = true\">";

	@RegisterExtension
	static final Chromium chromium = new Chromium();

	@Autowired
	private DelayQueueTemplate template;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		TestRedisProperties.register(registry);
	}

	@Test
	void anOperatorSeesTheTopicAndAScriptPayloadAsText() {
		this.template.send(DelayMessage.builder("boot3-browser", SCRIPT_PAYLOAD)
			.id("boot3-unsafe")
			.delay(Duration.ofHours(1))
			.build());
		chromium.open(this.port, "/delay-queue/");
		chromium.awaitText(By.cssSelector("tr[data-topic='boot3-browser'] td:nth-child(3)"), "1");
		chromium.open(this.port, "/delay-queue/#/topics/boot3-browser/messages/boot3-unsafe");
		assertThat(chromium.shown(By.id("payload")).getText()).isEqualTo(SCRIPT_PAYLOAD);
		assertThat(((JavascriptExecutor) chromium.driver()).executeScript("return window.injected === true"))
			.isEqualTo(Boolean.FALSE);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
