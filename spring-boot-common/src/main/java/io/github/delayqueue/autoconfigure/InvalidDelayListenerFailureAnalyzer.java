package io.github.delayqueue.autoconfigure;

import io.github.delayqueue.listener.InvalidDelayListenerException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a startup that failed because a
 * {@link io.github.delayqueue.listener.DelayListener @DelayListener} method cannot listen
 * as declared, naming the method and what is wrong, instead of a stack trace; registered
 * in {@code META-INF/spring.factories}.
 */
public final class InvalidDelayListenerFailureAnalyzer extends AbstractFailureAnalyzer<InvalidDelayListenerException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidDelayListenerException cause) {
		String description = "The @DelayListener method " + cause.getMethod() + " cannot listen as declared: "
				+ cause.getProblem();
		String action = "Correct the @DelayListener annotation or the parameter of " + cause.getMethod()
				+ ": a topic of at most 200 characters without '{', '}', '#' or whitespace; concurrency, maxBatchSize"
				+ " and groupConcurrency whole numbers;"
				+ " batchTimeout a duration such as 200ms; one parameter, the payload or a Delivery, or a List of them"
				+ " for a batch listener. Values may come from properties as ${...}, and the topic's"
				+ " delay-queue.topics.<topic>.* properties apply too.";
		return new FailureAnalysis(description, action, cause);
	}

}
