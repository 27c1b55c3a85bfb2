package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendFailedException;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
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
@ExtendWith(OutputCaptureExtension.class)
class PartitionedSendTests {

	private final String prefix = QueueContexts.uniquePrefix();

	private final ApplicationContextRunner runner = QueueContexts.runner(this.prefix)
		.withPropertyValues("delay-queue.topics.clicks.partitions=3");

	/**
	 * The template's contract for a batch: a failure throws {@code SendFailedException}
	 * carrying every id, since any subset of the messages may have been stored; a batch
	 * that a partition refuses does so too (caused by {@code PartitionCountException}),
	 * though its {@code orders} message is stored.
	 */
	@Test
	void aBatchThatAPartitionRefusedTellsWhichMessagesMayBeStored() {
		this.runner.run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = takeClicksToOnePartitionElsewhere(context);

			Throwable failure = catchThrowable(() -> queue.sendAll(
					List.of(DelayMessage.builder("orders", "order").id("order-1").delay(Duration.ofHours(1)).build(),
							DelayMessage.builder("clicks", "click").id("click-1").delay(Duration.ofHours(1)).build())));

			assertThat(store.inspect("orders", "order-1", 10)).as("order-1, stored").isNotNull();
			assertThat(failure).isInstanceOf(SendFailedException.class);
		});
	}

	/**
	 * Sends held back by a transaction go out after its commit; refused by a partition,
	 * they are not tried again, and are logged as "may NOT have been sent" with the
	 * reason, not as lost: the {@code orders} message is stored.
	 */
	@Test
	void sendsAfterCommitThatAPartitionRefusedAreNotLoggedAsLostWhenStored(CapturedOutput output) {
		this.runner.run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = takeClicksToOnePartitionElsewhere(context);

			catchThrowable(() -> new TransactionTemplate(new NoResourceTransactionManager())
				.executeWithoutResult((status) -> queue.sendAll(List.of(
						DelayMessage.builder("orders", "order").id("order-2").delay(Duration.ofHours(1)).build(),
						DelayMessage.builder("clicks", "click").id("click-2").delay(Duration.ofHours(1)).build()))));

			assertThat(store.inspect("orders", "order-2", 10)).as("order-2, stored").isNotNull();
			assertThat(output.getAll()).doesNotContain("message order-2 was NOT sent");
		});
	}

	/** Agrees 3 partitions here, then another application takes the topic to 1. */
	private RedisMessageStore takeClicksToOnePartitionElsewhere(ApplicationContext context) {
		RedisMessageStore store = context.getBean(RedisMessageStore.class);
		store.agreePartitions("clicks");
		RedisMessageStore other = new RedisMessageStore(context.getBean(RedisConnectionFactory.class), this.prefix);
		other.usePartitions(TopicPartitions.of(Map.of("clicks", 1)));
		other.agreePartitions("clicks");
		return store;
	}

	/** Transactions with nothing to commit, for their synchronizations. */
	static class NoResourceTransactionManager extends AbstractPlatformTransactionManager {

		@Override
		protected Object doGetTransaction() {
			return new Object();
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
		}

	}

}
