package io.github.delayqueue.dashboard;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

import io.github.delayqueue.core.DelayMessage;
import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard as an operator uses it, in headless Chromium, with real messages in real
 * Redis: the overview, a topic, a message found by id whose payload is a script (shown as
 * text, never run). Needs Debian's {@code chromium} and {@code chromium-driver}
 * ({@code .ci/run} installs them on CI); without them the tests are skipped, saying so.
 * Screenshots of the overview and a topic go to {@code target/dashboard-screenshots}.
 */
@SpringBootTest(classes = DashboardBrowserTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "delay-queue.dashboard.enabled=true")
class DashboardBrowserTests {

	private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

	private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final String SCRIPT_PAYLOAD = "<script>window.injected = true</script><img src=x onerror=\"window.injected = true\">";

	private static WebDriver browser;

	@Autowired
	private DelayQueueTemplate template;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@BeforeAll
	static void startChromium(@TempDir Path profile) {
		Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
				"The dashboard's browser tests need Debian's chromium and chromium-driver (" + CHROMIUM + ", "
						+ CHROMEDRIVER + "): apt-get install chromium chromium-driver; .ci/run does on CI");
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
			.usingAnyFreePort()
			.build();
		ChromeOptions options = new ChromeOptions();
		options.setBinary(CHROMIUM.toFile());
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
				"--window-size=1280,860", "--user-data-dir=" + profile.toAbsolutePath());
		browser = new ChromeDriver(service, options);
		browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20));
	}

	@AfterAll
	static void stopChromium() {
		if (browser != null) {
			browser.quit();
		}
	}

	@Test
	void theOverviewListsEveryTopicWithItsCounts() throws IOException {
		send("browser-orders", "order-1", "{\"order\":1}", Duration.ofMinutes(30));
		send("browser-orders", "order-2", "{\"order\":2}", Duration.ofMinutes(45));
		send("browser-webhooks", "hook-1", "{\"url\":\"https://example.com\"}", Duration.ofMinutes(5));
		open("/delay-queue/");
		WebElement row = awaitElement(By.cssSelector("tr[data-topic='browser-orders']"));
		List<WebElement> cells = row.findElements(By.tagName("td"));
		assertThat(cells.get(0).getText()).isEqualTo("browser-orders");
		assertThat(cells.get(1).getText()).isEqualTo("2");
		assertThat(cells.get(4).getText()).isEqualTo("0");
		assertThat(browser.findElement(By.id("access")).getText()).isEqualTo("read-only");
		screenshot("overview");
	}

	@Test
	void aTopicShowsItsMessagesInDueOrder() throws IOException {
		send("browser-topic", "first", "a", Duration.ofMinutes(10));
		send("browser-topic", "second", "b", Duration.ofMinutes(20));
		open("/delay-queue/");
		awaitElement(By.cssSelector("tr[data-topic='browser-topic'] a")).click();
		awaitElement(By.cssSelector("table#messages tr[data-id='second']"));
		List<String> ids = browser.findElements(By.cssSelector("table#messages tbody tr"))
			.stream()
			.map((row) -> row.getAttribute("data-id"))
			.toList();
		assertThat(ids).containsExactly("first", "second");
		assertThat(browser.findElement(By.cssSelector(".tabs a.current")).getText()).isEqualTo("scheduled (2)");
		screenshot("topic");
	}

	@Test
	void aMessageFoundByIdShowsAScriptPayloadAsTextWithoutRunningIt() {
		send("browser-unsafe", "unsafe-1", SCRIPT_PAYLOAD, Duration.ofHours(1));
		open("/delay-queue/");
		browser.findElement(By.id("find-topic")).sendKeys("browser-unsafe");
		browser.findElement(By.id("find-id")).sendKeys("unsafe-1");
		browser.findElement(By.cssSelector("#find button")).click();
		WebElement payload = awaitElement(By.id("payload"));
		assertThat(payload.getText()).isEqualTo(SCRIPT_PAYLOAD);
		assertThat(payload.findElements(By.xpath("./*"))).isEmpty();
		Object injected = ((JavascriptExecutor) browser).executeScript("return window.injected === true");
		assertThat(injected).isEqualTo(Boolean.FALSE);
	}

	@Test
	void anUnknownMessageShowsWhatWasNotFound() {
		open("/delay-queue/#/topics/browser-orders/messages/no-such-id");
		WebElement error = awaitElement(By.cssSelector("#view .error"));
		assertThat(error.getText()).isEqualTo("Topic 'browser-orders' has no message with id 'no-such-id'");
	}

	private void send(String topic, String id, String payload, Duration delay) {
		this.template.send(DelayMessage.builder(topic, payload).id(id).delay(delay).build());
	}

	private void open(String path) {
		browser.get("http://localhost:" + this.port + path);
	}

	private static WebElement awaitElement(By selector) {
		return await().atMost(Duration.ofSeconds(10))
			.ignoreExceptions()
			.until(() -> browser.findElement(selector), (element) -> element.isDisplayed());
	}

	private static void screenshot(String name) throws IOException {
		Path directory = Path.of("target/dashboard-screenshots");
		Files.createDirectories(directory);
		Path shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
		Files.copy(shot, directory.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
