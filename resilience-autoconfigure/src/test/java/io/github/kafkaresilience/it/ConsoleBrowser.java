package io.github.kafkaresilience.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Function;

import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import static org.assertj.core.api.Assertions.fail;

/**
 * Headless Chromium driven by Selenium, from Debian's {@code chromium} and
 * {@code chromium-driver} (which {@code .ci/run} installs): the paths are set, so nothing
 * is looked up or downloaded. {@code -Dconsole.chromium} and
 * {@code -Dconsole.chromedriver} name others. Screenshots go to
 * {@code target/console-screenshots}.
 */
final class ConsoleBrowser {

	static final Path SCREENSHOTS = Path.of("target", "console-screenshots");

	private ConsoleBrowser() {
	}

	static WebDriver start() {
		File chromium = new File(System.getProperty("console.chromium", "/usr/bin/chromium"));
		File driver = new File(System.getProperty("console.chromedriver", "/usr/bin/chromedriver"));
		if (!chromium.canExecute() || !driver.canExecute()) {
			fail("The console's browser tests need Debian's chromium and chromium-driver (" + chromium + ", " + driver
					+ "): apt-get install chromium chromium-driver (.ci/run installs them), or name others with "
					+ "-Dconsole.chromium and -Dconsole.chromedriver");
		}
		ChromeOptions options = new ChromeOptions();
		options.setBinary(chromium);
		options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
				"--window-size=1400,1000", "--disable-extensions", "--no-first-run");
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver)
			.usingAnyFreePort()
			.build();
		ChromeDriver browser = new ChromeDriver(service, options);
		browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
		return browser;
	}

	/**
	 * Opens the console and logs in through Spring Security's form as {@code ops}
	 * (password {@code secret}); returns once the console lists its listeners.
	 */
	static void logIn(WebDriver browser, String console) {
		browser.get(console);
		waitUntil(browser, ExpectedConditions.presenceOfElementLocated(By.name("username")));
		browser.findElement(By.name("username")).sendKeys("ops");
		browser.findElement(By.name("password")).sendKeys("secret");
		browser.findElement(By.cssSelector("button[type=submit]")).click();
		waitUntil(browser, ExpectedConditions.urlContains(console));
		waitUntil(browser, ExpectedConditions.numberOfElementsToBeMoreThan(By.cssSelector("#listeners tbody tr"), 0));
	}

	/**
	 * Waits up to a minute for a condition on the page, which refreshes its rows now and
	 * then.
	 */
	static <T> T waitUntil(WebDriver browser, Function<WebDriver, T> condition) {
		return new WebDriverWait(browser, Duration.ofSeconds(60)).ignoring(StaleElementReferenceException.class)
			.until(condition::apply);
	}

	/** Saves what the browser shows as {@code target/console-screenshots/<name>.png}. */
	static Path screenshot(WebDriver browser, String name) throws IOException {
		Files.createDirectories(SCREENSHOTS);
		Path file = SCREENSHOTS.resolve(name + ".png");
		Files.write(file, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
		return file;
	}

}
