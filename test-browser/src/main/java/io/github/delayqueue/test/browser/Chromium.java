package io.github.delayqueue.test.browser;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import static org.awaitility.Awaitility.await;

/**
 * Debian's headless Chromium, driven through its chromedriver, for the dashboard's
 * browser tests: never a browser or driver downloaded by a test tool. Register it in a
 * test class
 * ({@code @RegisterExtension static final Chromium chromium = new Chromium();}): it
 * starts the browser before the class's tests and quits it after them; where Chromium is
 * not installed, each test is skipped, saying why.
 */
public final class Chromium implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

	private static final Path BROWSER = Path.of("/usr/bin/chromium");

	private static final Path DRIVER = Path.of("/usr/bin/chromedriver");

	private @Nullable WebDriver driver;

	private @Nullable Path profile;

	@Override
	public void beforeAll(ExtensionContext context) throws IOException {
		if (!installed()) {
			return;
		}
		this.profile = Files.createTempDirectory("delay-queue-chromium-");
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
			.usingAnyFreePort()
			.build();
		ChromeOptions options = new ChromeOptions();
		options.setBinary(BROWSER.toFile());
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
				"--window-size=1280,860", "--user-data-dir=" + this.profile.toAbsolutePath());
		ChromeDriver started = new ChromeDriver(service, options);
		started.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20));
		this.driver = started;
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		Assumptions.assumeTrue(installed(), "The dashboard's browser tests need Debian's chromium and chromium-driver ("
				+ BROWSER + ", " + DRIVER + "): apt-get install chromium chromium-driver; .ci/run does on CI");
	}

	@Override
	public void afterAll(ExtensionContext context) throws IOException {
		if (this.driver != null) {
			this.driver.quit();
			this.driver = null;
		}
		if (this.profile != null) {
			try (Stream<Path> files = Files.walk(this.profile)) {
				for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
					Files.deleteIfExists(file);
				}
			}
			this.profile = null;
		}
	}

	private static boolean installed() {
		return Files.isExecutable(BROWSER) && Files.isExecutable(DRIVER);
	}

	/**
	 * The browser's driver.
	 * @return the driver
	 */
	public WebDriver driver() {
		WebDriver started = this.driver;
		if (started == null) {
			throw new IllegalStateException("Chromium is not started: register Chromium with @RegisterExtension");
		}
		return started;
	}

	/**
	 * Opens a page of an application on this machine.
	 * @param port the application's port
	 * @param path the page's path, with its fragment if any
	 */
	public void open(int port, String path) {
		driver().get("http://localhost:" + port + path);
	}

	/**
	 * Waits up to 10 seconds for an element to be shown.
	 * @param selector the element
	 * @return the element
	 */
	public WebElement shown(By selector) {
		return await().atMost(Duration.ofSeconds(10))
			.ignoreExceptions()
			.until(() -> driver().findElement(selector), WebElement::isDisplayed);
	}

	/**
	 * Clicks an element once it is shown, finding it again if the page replaced it in
	 * between (a live page re-renders while a test acts); waits up to 10 seconds.
	 * @param selector the element
	 */
	public void click(By selector) {
		await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> {
			WebElement element = driver().findElement(selector);
			if (!element.isDisplayed()) {
				throw new AssertionError(selector + " is not shown");
			}
			element.click();
		});
	}

	/**
	 * Reads the text of an element once it is shown, finding it again if the page
	 * replaced it while it was read (a live page re-renders); waits up to 10 seconds.
	 * @param selector the element
	 * @return its text
	 */
	public String textOf(By selector) {
		return await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
			WebElement element = driver().findElement(selector);
			return element.isDisplayed() ? element.getText() : null;
		}, (text) -> text != null);
	}

	/**
	 * Waits up to 10 seconds for an element's text.
	 * @param selector the element
	 * @param text the text it must come to have
	 */
	public void awaitText(By selector, String text) {
		await().atMost(Duration.ofSeconds(10))
			.ignoreExceptions()
			.until(() -> driver().findElement(selector).getText(), text::equals);
	}

	/**
	 * Accepts the confirmation the page asked for.
	 */
	public void confirm() {
		await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
			driver().switchTo().alert().accept();
			return true;
		});
	}

	/**
	 * Saves what the browser shows to {@code target/dashboard-screenshots/<name>.png}.
	 * @param name the screenshot's name
	 * @throws IOException if it cannot be written
	 */
	public void screenshot(String name) throws IOException {
		Path directory = Path.of("target/dashboard-screenshots");
		Files.createDirectories(directory);
		Path shot = ((TakesScreenshot) driver()).getScreenshotAs(OutputType.FILE).toPath();
		Files.copy(shot, directory.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
	}

}
