package io.github.delayqueue.listener;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the consumer of a topic. The method takes exactly one parameter:
 * the payload ({@code String}, {@code byte[]} or any type the JSON mapper can read) or a
 * {@link Delivery}. Returning normally acknowledges the message; throwing asks for a
 * retry after backoff, until the topic's maximum attempts send it to the dead-letter set.
 *
 * <p>
 * Each topic may have one listener method per application.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DelayListener {

	/**
	 * The topic to consume; {@code ${...}} placeholders are resolved.
	 * @return the topic
	 */
	String topic();

	/**
	 * How many messages of this topic this application handles at once; {@code ${...}}
	 * placeholders are resolved. Empty means
	 * {@code delay-queue.topics.<topic>.concurrency}, else
	 * {@code delay-queue.listener.concurrency}.
	 * @return the concurrency, or empty
	 */
	String concurrency() default "";

	/**
	 * How many deliveries a message gets before it goes to the dead-letter set. Zero or
	 * less means {@code delay-queue.topics.<topic>.max-attempts}, else
	 * {@code delay-queue.listener.max-attempts}.
	 * @return the maximum attempts, or 0
	 */
	int maxAttempts() default 0;

}
