package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.NoResourceTransactionManager;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Sends through {@code DelayQueueTemplate} that a partition refuses: this application
 * agreed on 3 partitions for {@code clicks}, then another application took it to 1;
 * {@code orders} has no partitions. A batch or a transaction's sends to both topics store
 * the {@code orders} message and are refused for {@code clicks}: the failure carries
 * every id, and nothing stored is logged as lost.
 */
class PartitionedSendTests {

	private final String prefix = TestStore.uniquePrefix();

	/**
	 * The template's contract for a batch: a failure throws {@code SendFailedException}
	 * carrying every id, since any subset of the messages may have been stored; a batch
	 * that a partition refuses does so too (caused by {@code PartitionCountException}),
	 * though its {@code orders} message is stored.
	 */
	@Test
	void aBatchThatAPartitionRefusedTellsWhichMessagesMayBeStored() {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).partitions(Map.of("clicks", 3)).build()) {
			DelayQueueTemplate queue = fixture.template();
			RedisMessageStore store = takeClicksToOnePartitionElsewhere(fixture);

			Throwable failure = catchThrowable(() -> queue.sendAll(
					List.of(DelayMessage.builder("orders", "order").id("order-1").delay(Duration.ofHours(1)).build(),
							DelayMessage.builder("clicks", "click").id("click-1").delay(Duration.ofHours(1)).build())));

			assertThat(store.inspect("orders", "order-1", 10)).as("order-1, stored").isNotNull();
			assertThat(failure).isInstanceOf(SendFailedException.class);
		}
	}

	/**
	 * Sends held back by a transaction go out after its commit; refused by a partition,
	 * they are not tried again, and are logged as "may NOT have been sent" with the
	 * reason, not as lost: the {@code orders} message is stored.
	 */
	@Test
	void sendsAfterCommitThatAPartitionRefusedAreNotLoggedAsLostWhenStored() {
		Logger logger = (Logger) LoggerFactory.getLogger("io.github.delayqueue");
		LogCapture output = new LogCapture();
		output.start();
		logger.addAppender(output);
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).partitions(Map.of("clicks", 3)).build()) {
			DelayQueueTemplate queue = fixture.template();
			RedisMessageStore store = takeClicksToOnePartitionElsewhere(fixture);

			catchThrowable(() -> new TransactionTemplate(new NoResourceTransactionManager())
				.executeWithoutResult((status) -> queue.sendAll(List.of(
						DelayMessage.builder("orders", "order").id("order-2").delay(Duration.ofHours(1)).build(),
						DelayMessage.builder("clicks", "click").id("click-2").delay(Duration.ofHours(1)).build()))));

			assertThat(store.inspect("orders", "order-2", 10)).as("order-2, stored").isNotNull();
			assertThat(output.getAll()).doesNotContain("message order-2 was NOT sent");
		}
		finally {
			logger.detachAppender(output);
		}
	}

	/** Agrees 3 partitions here, then another application takes the topic to 1. */
	private RedisMessageStore takeClicksToOnePartitionElsewhere(TestStore fixture) {
		RedisMessageStore store = fixture.store();
		store.agreePartitions("clicks");
		RedisMessageStore other = new RedisMessageStore(fixture.connectionFactory(), this.prefix);
		other.usePartitions(TopicPartitions.of(Map.of("clicks", 1)));
		other.agreePartitions("clicks");
		return store;
	}

	/** The messages logged while it is attached. */
	static class LogCapture extends AppenderBase<ILoggingEvent> {

		private final StringBuffer all = new StringBuffer();

		@Override
		protected void append(ILoggingEvent event) {
			this.all.append(event.getFormattedMessage()).append(System.lineSeparator());
		}

		String getAll() {
			return this.all.toString();
		}

	}

}
