package io.github.delayqueue.autoconfigure;

/**
 * The delay-queue artifacts of one Spring Boot line run on the other.
 */
public class WrongSpringBootLineException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String version;

	private final int major;

	private final String starter;

	private final String testKit;

	private final String otherStarter;

	private final String otherTestKit;

	/**
	 * Creates the exception.
	 * @param version the Spring Boot version the application runs
	 * @param major the Spring Boot major version the artifacts are for
	 * @param starter the starter of the artifacts found
	 * @param testKit the test kit of the artifacts found, which brings them too
	 * @param otherStarter the starter of the other line
	 * @param otherTestKit the test kit of the other line
	 */
	public WrongSpringBootLineException(String version, int major, String starter, String testKit, String otherStarter,
			String otherTestKit) {
		super("io.github.delayqueue:" + starter + " (or the test kit io.github.delayqueue:" + testKit
				+ ") is for Spring Boot " + major + ".x, but this application runs Spring Boot " + version
				+ ": use io.github.delayqueue:" + otherStarter + " (and " + otherTestKit + ") instead");
		this.version = version;
		this.major = major;
		this.starter = starter;
		this.testKit = testKit;
		this.otherStarter = otherStarter;
		this.otherTestKit = otherTestKit;
	}

	/**
	 * @return the Spring Boot version the application runs
	 */
	public String getVersion() {
		return this.version;
	}

	/**
	 * @return the Spring Boot major version the artifacts are for
	 */
	public int getMajor() {
		return this.major;
	}

	/**
	 * @return the starter of the artifacts found
	 */
	public String getStarter() {
		return this.starter;
	}

	/**
	 * @return the test kit of the artifacts found, which brings them too
	 */
	public String getTestKit() {
		return this.testKit;
	}

	/**
	 * @return the starter of the other line, the one to use
	 */
	public String getOtherStarter() {
		return this.otherStarter;
	}

	/**
	 * @return the test kit of the other line, the one to use
	 */
	public String getOtherTestKit() {
		return this.otherTestKit;
	}

}
