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
		String other = cause.getOtherStarter();
		String description = "This application runs Spring Boot " + cause.getVersion() + ", but io.github.delayqueue:"
				+ cause.getStarter() + " (with its auto-configuration) is for Spring Boot " + cause.getMajor() + ".x.";
		String action = "Replace io.github.delayqueue:" + cause.getStarter() + " with io.github.delayqueue:" + other
				+ " (and the test kit with io.github.delayqueue:" + cause.getOtherTestKit()
				+ "), at the same version: both lines"
				+ " have the same annotations, properties and endpoint. The delay-queue-bom keeps the versions in line.";
		return new FailureAnalysis(description, action, cause);
	}

}
