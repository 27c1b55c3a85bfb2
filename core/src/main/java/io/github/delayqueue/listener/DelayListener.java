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
 * retry after backoff, until the topic's maximum attempts send it to the dead-letter set
 * (an exception of {@link #noRetryFor()} at once; a {@link DelayListenerErrorHandler}
 * bean may decide otherwise).
 *
 * <p>
 * A parameter {@code List<T>} or {@code List<Delivery<T>>} makes a batch listener: it
 * receives up to {@link #maxBatchSize()} due messages in one call, waiting at most
 * {@link #batchTimeout()} to fill a batch once its first message is due. Returning
 * normally acknowledges the whole batch; throwing retries each of its messages, or only
 * those named by a {@link BatchListenerFailedException}. A payload that is itself a JSON
 * array is received as a {@code Delivery<List<T>>}.
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
	 * How many messages of one group (see {@code DelayMessage.Builder.group}) are in
	 * flight at once, across every application consuming the topic, from 1 to 1000;
	 * {@code ${...}} placeholders are resolved. Empty means
	 * {@code delay-queue.topics.<topic>.group-concurrency}, else no limit. With 1, a
	 * group's messages are handled one at a time.
	 * @return the group concurrency, or empty
	 */
	String groupConcurrency() default "";

	/**
	 * What a message of a group that fails does to its group: {@code strict} (it waits
	 * for its next attempt in its group, which waits with it: no later message of the
	 * group passes it) or {@code relaxed} (it waits in the schedule; its group goes on);
	 * {@code ${...}} placeholders are resolved, case does not matter. Empty means
	 * {@code delay-queue.topics.<topic>.group-order}, else relaxed.
	 * @return the group order, or empty
	 */
	String groupOrder() default "";

	/**
	 * How many deliveries a message gets before it goes to the dead-letter set. Zero or
	 * less means {@code delay-queue.topics.<topic>.max-attempts}, else
	 * {@code delay-queue.listener.max-attempts}.
	 * @return the maximum attempts, or 0
	 */
	int maxAttempts() default 0;

	/**
	 * For a batch listener, the most messages one call receives, from 1 to 1000;
	 * {@code ${...}} placeholders are resolved. Empty means
	 * {@code delay-queue.topics.<topic>.max-batch-size}, else 100.
	 * @return the maximum batch size, or empty
	 */
	String maxBatchSize() default "";

	/**
	 * For a batch listener, how long to wait to fill a batch once its first message is
	 * due, such as {@code "200ms"} or {@code "PT1S"}, at most a minute; {@code ${...}}
	 * placeholders are resolved. Empty means
	 * {@code delay-queue.topics.<topic>.batch-timeout}, else 100 milliseconds.
	 * @return the batch timeout, or empty
	 */
	String batchTimeout() default "";

	/**
	 * Exceptions that are not retried: a failure whose exception, or one of its causes,
	 * is an instance of one of them is dead-lettered at once with its error. Applies
	 * together with {@code delay-queue.topics.<topic>.no-retry-for} and
	 * {@code delay-queue.listener.no-retry-for}.
	 * @return the exceptions not retried
	 */
	Class<? extends Throwable>[] noRetryFor() default {};

	/**
	 * Consumes the topic's dead letters instead of its messages: each message of the
	 * topic that dies from the moment this listener first reached Redis (its last attempt
	 * failed, an exception of {@link #noRetryFor()}, a lease that expired too often, a
	 * stored message found corrupt) is delivered to this method at least once, with
	 * {@link Delivery#deadLetter()} telling its last error and attempts. The dead letters
	 * wait in the topic's dead-letter queue {@code <topic>#dead}, in the same Redis hash
	 * slot as the topic, and are handled as any topic's messages are: retried on failure,
	 * until they die in the queue's own dead-letter set. The dead-letter set of the topic
	 * keeps them too, for the endpoint. The other attributes apply to the dead-letter
	 * queue, and so do the properties {@code delay-queue.topics[<topic>#dead].*} (but for
	 * {@code partitions}: the queue has the topic's). The queue delivers late dead
	 * letters whatever {@code delay-queue.listener.late-policy} says; a
	 * {@code late-policy} of {@code dead-letter} set for the queue fails startup, as it
	 * would bury them.
	 * @return whether the method consumes the topic's dead letters
	 */
	boolean deadLetters() default false;

}
