package io.github.delayqueue.test;

import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.AbstractTestExecutionListener;
import org.springframework.test.context.support.DependencyInjectionTestExecutionListener;

/**
 * Starts each test method of an {@link EmbeddedDelayQueue @EmbeddedDelayQueue} class on
 * an empty queue ({@link DelayQueueTestClock#clear()}), so that tests sharing a cached
 * context never see each other's messages. Registered in
 * {@code META-INF/spring.factories}.
 */
public final class EmbeddedDelayQueueTestExecutionListener extends AbstractTestExecutionListener {

	/**
	 * Runs right after dependency injection, before the test's own {@code @BeforeEach}
	 * methods.
	 */
	@Override
	public int getOrder() {
		return DependencyInjectionTestExecutionListener.ORDER + 10;
	}

	@Override
	public void beforeTestMethod(TestContext testContext) {
		if (TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), EmbeddedDelayQueue.class)) {
			testContext.getApplicationContext()
				.getBeanProvider(DelayQueueTestClock.class)
				.ifAvailable(DelayQueueTestClock::clear);
		}
	}

}
