package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.store.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends inside a Spring transaction wait for its commit and are dropped on rollback.
 */
class TransactionalSendTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix());

	@Test
	void sendInsideATransactionIsStoredOnlyWhenItCommits() {
		this.runner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			SendResult[] sent = new SendResult[1];
			transactions().executeWithoutResult((status) -> {
				sent[0] = template.send("orders", "in a transaction", Duration.ofMinutes(1));
				assertThat(isStored(context, sent[0].id())).isFalse();
			});
			assertThat(isStored(context, sent[0].id())).isTrue();
			assertThat(sent[0].duplicate()).isFalse();
		});
	}

	@Test
	void sendInsideATransactionThatRollsBackIsDropped() {
		this.runner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			SendResult[] sent = new SendResult[2];
			transactions().executeWithoutResult((status) -> {
				sent[0] = template.send("orders", "never", Duration.ofMinutes(1));
				sent[1] = template.sendAll(List.of(DelayMessage.builder("orders", "never either").build())).get(0);
				status.setRollbackOnly();
			});
			assertThat(isStored(context, sent[0].id())).isFalse();
			assertThat(isStored(context, sent[1].id())).isFalse();
		});
	}

	@Test
	void invalidMessageInsideATransactionFailsAtOnce() {
		this.runner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			transactions().executeWithoutResult((status) -> {
				try {
					template.send("bad topic", "x", Duration.ZERO);
				}
				catch (InvalidMessageException ex) {
					assertThat(ex).hasMessageContaining("whitespace");
					return;
				}
				throw new AssertionError("expected an InvalidMessageException");
			});
		});
	}

	@Test
	void sendIsImmediateWhenTransactionAwarenessIsSwitchedOff() {
		this.runner.withPropertyValues("delay-queue.producer.transaction-aware=false").run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			transactions().executeWithoutResult((status) -> {
				SendResult sent = template.send("orders", "now", Duration.ofMinutes(1));
				assertThat(isStored(context, sent.id())).isTrue();
				status.setRollbackOnly();
			});
		});
	}

	private static boolean isStored(ApplicationContext context, String id) {
		String key = context.getBean(RedisMessageStore.class).keys("orders").messages();
		return Boolean.TRUE.equals(context.getBean(StringRedisTemplate.class).opsForHash().hasKey(key, id));
	}

	private static TransactionTemplate transactions() {
		return new TransactionTemplate(new InMemoryTransactionManager());
	}

	/** A transaction manager with no resource: enough to drive transaction synchronization. */
	static class InMemoryTransactionManager extends AbstractPlatformTransactionManager {

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
