package io.github.delayqueue.test;

/**
 * AssertJ entry point for what the queue holds, e.g.
 * {@code assertThat(clock).topic("order-timeout").hasScheduled(orderId)}.
 */
public final class DelayQueueAssertions {

	private DelayQueueAssertions() {
	}

	/**
	 * Starts assertions on the queue that a test clock drives.
	 * @param queue the clock of the queue (a bean of an
	 * {@link EmbeddedDelayQueue @EmbeddedDelayQueue} test)
	 * @return the assertions
	 */
	public static DelayQueueAssert assertThat(DelayQueueTestClock queue) {
		return new DelayQueueAssert(queue);
	}

	/**
	 * Assertions on the queue; pick a topic with {@link #topic(String)}.
	 */
	public static final class DelayQueueAssert {

		private final DelayQueueTestClock queue;

		DelayQueueAssert(DelayQueueTestClock queue) {
			this.queue = queue;
		}

		/**
		 * Starts assertions on one topic.
		 * @param topic the topic
		 * @return the topic's assertions
		 */
		public TopicAssert topic(String topic) {
			return new TopicAssert(this.queue.store().inspector(topic));
		}

	}

}
