package io.github.delayqueue.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a startup that failed because the delay-queue artifacts of one Spring Boot
 * line run on the other, naming the artifacts to use instead; registered in
 * {@code META-INF/spring.factories}.
 */
public final class WrongSpringBootLineFailureAnalyzer extends AbstractFailureAnalyzer<WrongSpringBootLineException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, WrongSpringBootLineException cause) {
		String description = "This application runs Spring Boot " + cause.getVersion()
				+ ", but the delay-queue artifacts for Spring Boot " + cause.getMajor()
				+ ".x are on its class path: io.github.delayqueue:" + cause.getStarter()
				+ " or the test kit io.github.delayqueue:" + cause.getTestKit() + " brings them.";
		String action = "Replace io.github.delayqueue:" + cause.getStarter() + " with io.github.delayqueue:"
				+ cause.getOtherStarter() + " and io.github.delayqueue:" + cause.getTestKit()
				+ " with io.github.delayqueue:" + cause.getOtherTestKit()
				+ ", whichever of them you have, at the same version: both lines have the same annotations,"
				+ " properties, endpoint and test kit. The delay-queue-bom keeps the versions in line.";
		return new FailureAnalysis(description, action, cause);
	}

}
