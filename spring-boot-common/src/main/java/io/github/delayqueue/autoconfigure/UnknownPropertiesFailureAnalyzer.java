package io.github.delayqueue.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a startup that failed because keys under {@code delay-queue.} match no
 * property while {@code delay-queue.fail-on-unknown-properties} is on, naming each with
 * where it was set and the closest known key; registered in
 * {@code META-INF/spring.factories}.
 */
public final class UnknownPropertiesFailureAnalyzer extends AbstractFailureAnalyzer<UnknownPropertiesException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, UnknownPropertiesException cause) {
		String description = "delay-queue.fail-on-unknown-properties is true, and "
				+ ((cause.getProblems().size() == 1) ? "one key under delay-queue. matches"
						: cause.getProblems().size() + " keys under delay-queue. match")
				+ " no property:\n\n    " + String.join("\n    ", cause.getProblems());
		String action = "Correct or remove the keys above (every delay-queue property is listed in"
				+ " docs/configuration.md), or set delay-queue.fail-on-unknown-properties=false to log a warning"
				+ " for each instead.";
		return new FailureAnalysis(description, action, cause);
	}

}
