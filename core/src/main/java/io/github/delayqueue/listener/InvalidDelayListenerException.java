package io.github.delayqueue.listener;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanInitializationException;

/**
 * A {@link DelayListener @DelayListener} method that cannot listen as declared: a bad
 * topic, concurrency, batch setting or parameter, or a topic with two listeners. Thrown
 * at startup; Spring Boot explains it without a stack trace.
 */
public class InvalidDelayListenerException extends BeanInitializationException {

	private static final long serialVersionUID = 1L;

	private final String method;

	private final String problem;

	/**
	 * Creates the exception.
	 * @param method the listener method, as {@code class.method}
	 * @param problem what is wrong with it, as a sentence without the method
	 * @param cause the failure that found the problem, if any
	 */
	public InvalidDelayListenerException(String method, String problem, @Nullable Throwable cause) {
		super("@DelayListener method " + method + ": " + problem, cause);
		this.method = method;
		this.problem = problem;
	}

	/**
	 * @return the listener method, as {@code class.method}
	 */
	public String getMethod() {
		return this.method;
	}

	/**
	 * @return what is wrong with the method
	 */
	public String getProblem() {
		return this.problem;
	}

}
