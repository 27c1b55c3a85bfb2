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

	private final String starter;

	private final String otherStarter;

	private final String otherTestKit;

	/**
	 * Creates the check of a line.
	 * @param major the Spring Boot major version the line is for
	 * @param starter the starter of the line
	 * @param otherStarter the starter of the other line
	 * @param otherTestKit the test kit of the other line
	 */
	protected SpringBootLineCheck(int major, String starter, String otherStarter, String otherTestKit) {
		this.major = major;
		this.starter = starter;
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
	 */
	void check(@Nullable String version) {
		if (version != null && !version.startsWith(this.major + ".")) {
			throw new WrongSpringBootLineException(version, this.major, this.starter, this.otherStarter,
					this.otherTestKit);
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
