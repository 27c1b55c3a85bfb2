package io.github.delayqueue.test.browser;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
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
 * browser tests: never a browser or driver downloaded by a test tool. Where they are not
 * installed, each test that calls {@link #assumeInstalled()} is skipped, saying why.
 */
public final class Chromium implements AutoCloseable {

	private static final Path BROWSER = Path.of("/usr/bin/chromium");

	private static final Path DRIVER = Path.of("/usr/bin/chromedriver");

	private final WebDriver driver;

	private Chromium(WebDriver driver) {
		this.driver = driver;
	}

	/**
	 * Skips the calling test, saying why, when Chromium is not installed: call it before
	 * each test, so that each is reported as skipped.
	 */
	public static void assumeInstalled() {
		Assumptions.assumeTrue(installed(), "The dashboard's browser tests need Debian's chromium and chromium-driver ("
				+ BROWSER + ", " + DRIVER + "): apt-get install chromium chromium-driver; .ci/run does on CI");
	}

	/**
	 * Starts Chromium when it is installed.
	 * @param profile an empty directory for the browser's profile
	 * @return the browser, or {@code null} when it is not installed
	 */
	public static @Nullable Chromium startIfInstalled(Path profile) {
		if (!installed()) {
			return null;
		}
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
			.usingAnyFreePort()
			.build();
		ChromeOptions options = new ChromeOptions();
		options.setBinary(BROWSER.toFile());
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
				"--window-size=1280,860", "--user-data-dir=" + profile.toAbsolutePath());
		ChromeDriver driver = new ChromeDriver(service, options);
		driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20));
		return new Chromium(driver);
	}

	private static boolean installed() {
		return Files.isExecutable(BROWSER) && Files.isExecutable(DRIVER);
	}

	/**
	 * The browser's driver.
	 * @return the driver
	 */
	public WebDriver driver() {
		return this.driver;
	}

	/**
	 * Opens a page of an application on this machine.
	 * @param port the application's port
	 * @param path the page's path, with its fragment if any
	 */
	public void open(int port, String path) {
		this.driver.get("http://localhost:" + port + path);
	}

	/**
	 * Waits up to 10 seconds for an element to be shown.
	 * @param selector the element
	 * @return the element
	 */
	public WebElement shown(By selector) {
		return await().atMost(Duration.ofSeconds(10))
			.ignoreExceptions()
			.until(() -> this.driver.findElement(selector), WebElement::isDisplayed);
	}

	/**
	 * Waits up to 10 seconds for an element's text.
	 * @param selector the element
	 * @param text the text it must come to have
	 */
	public void awaitText(By selector, String text) {
		await().atMost(Duration.ofSeconds(10))
			.ignoreExceptions()
			.until(() -> this.driver.findElement(selector).getText(), text::equals);
	}

	/**
	 * Accepts the confirmation the page asked for.
	 */
	public void confirm() {
		await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
			this.driver.switchTo().alert().accept();
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
		Path shot = ((TakesScreenshot) this.driver).getScreenshotAs(OutputType.FILE).toPath();
		Files.copy(shot, directory.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
	}

	@Override
	public void close() {
		this.driver.quit();
	}

}
