package io.github.delayqueue.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;

/**
 * Fails startup at once, before any auto-configuration runs, when the delay-queue
 * artifacts of one Spring Boot line run on the other: otherwise the first sign is a
 * missing Spring Boot class deep in the auto-configuration. Each line registers a
 * subclass naming its major version and its starter in {@code META-INF/spring.factories};
 * {@link WrongSpringBootLineFailureAnalyzer} explains the failure.
 */
public abstract class SpringBootLineCheck implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered {

	private final int major;

	private final int minimumMinor;

	private final String starter;

	private final String testKit;

	private final String otherStarter;

	private final String otherTestKit;

	/**
	 * Creates the check of a line.
	 * @param major the Spring Boot major version the line is for
	 * @param minimumMinor the oldest minor version of that major the line runs on
	 * @param starter the starter of the line
	 * @param testKit the test kit of the line
	 * @param otherStarter the starter of the other line
	 * @param otherTestKit the test kit of the other line
	 */
	protected SpringBootLineCheck(int major, int minimumMinor, String starter, String testKit, String otherStarter,
			String otherTestKit) {
		this.major = major;
		this.minimumMinor = minimumMinor;
		this.starter = starter;
		this.testKit = testKit;
		this.otherStarter = otherStarter;
		this.otherTestKit = otherTestKit;
	}

	@Override
	public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
		check(SpringBootVersion.getVersion());
	}

	/**
	 * Checks a Spring Boot version against this line.
	 * @param version the version, or {@code null} when unknown (then nothing is checked)
	 * @throws WrongSpringBootLineException if the version is of another major line
	 * @throws IllegalStateException if the version is of this line but older than it runs
	 * on
	 */
	void check(@Nullable String version) {
		if (version == null) {
			return;
		}
		String[] parts = version.split("[.-]");
		int major = number(parts, 0);
		int minor = number(parts, 1);
		if (major != this.major) {
			throw new WrongSpringBootLineException(version, this.major, this.starter, this.testKit, this.otherStarter,
					this.otherTestKit);
		}
		if (minor >= 0 && minor < this.minimumMinor) {
			throw new IllegalStateException("io.github.delayqueue:" + this.starter + " needs Spring Boot " + this.major
					+ "." + this.minimumMinor + " or later, but this application runs Spring Boot " + version
					+ ": upgrade Spring Boot");
		}
	}

	private static int number(String[] parts, int index) {
		try {
			return (index < parts.length) ? Integer.parseInt(parts[index]) : -1;
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
