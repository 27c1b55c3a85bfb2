package io.github.delayqueue.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the delay queue of a Spring test context ({@code @SpringBootTest} and the like) on
 * a private Redis with a test clock:
 * <ul>
 * <li>the context's Redis connection goes to the test Redis of this JVM (see
 * {@link io.github.delayqueue.test.redis.TestRedis}: a URL from
 * {@code DELAY_QUEUE_TEST_REDIS_URL}, else Testcontainers when it is on the class path
 * and Docker answers, else a {@code redis-server} process on a free port), whatever
 * {@code spring.data.redis.*} the application configures, so nothing touches another
 * Redis;</li>
 * <li>the queue's keys get a prefix of their own per context, so test classes never see
 * each other's messages, and every message is deleted before each test method;</li>
 * <li>a {@link DelayQueueTestClock} bean moves the queue's time forward.</li>
 * </ul>
 * For {@code ApplicationContextRunner} tests, use {@link EmbeddedDelayQueueInitializer}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface EmbeddedDelayQueue {

	/**
	 * The longest wait of {@link DelayQueueTestClock#awaitIdle()}, and of each step of
	 * {@link DelayQueueTestClock#advance} (a due time, a lease end or a schedule's tick),
	 * for the listeners to handle what is due, in Spring Boot's duration format.
	 * @return the timeout, {@code 10s} by default
	 */
	String timeout() default "10s";

}
