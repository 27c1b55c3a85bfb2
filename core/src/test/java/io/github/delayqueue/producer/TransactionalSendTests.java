package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends inside a Spring transaction wait for its commit and are dropped on rollback.
 */
class TransactionalSendTests {

	@Test
	void sendInsideATransactionIsStoredOnlyWhenItCommits() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			SendResult[] sent = new SendResult[1];
			transactions().executeWithoutResult((status) -> {
				sent[0] = template.send("orders", "in a transaction", Duration.ofMinutes(1));
				assertThat(isStored(fixture, sent[0].id())).isFalse();
			});
			assertThat(isStored(fixture, sent[0].id())).isTrue();
			assertThat(sent[0].duplicate()).isFalse();
		}
	}

	@Test
	void sendInsideATransactionThatRollsBackIsDropped() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			SendResult[] sent = new SendResult[2];
			transactions().executeWithoutResult((status) -> {
				sent[0] = template.send("orders", "never", Duration.ofMinutes(1));
				sent[1] = template.sendAll(List.of(DelayMessage.builder("orders", "never either").build())).get(0);
				status.setRollbackOnly();
			});
			assertThat(isStored(fixture, sent[0].id())).isFalse();
			assertThat(isStored(fixture, sent[1].id())).isFalse();
		}
	}

	@Test
	void invalidMessageInsideATransactionFailsAtOnce() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
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
		}
	}

	@Test
	void sendIsImmediateWhenTransactionAwarenessIsSwitchedOff() {
		try (TestStore fixture = TestStore.builder().transactionAware(false).build()) {
			DelayQueueTemplate template = fixture.template();
			transactions().executeWithoutResult((status) -> {
				SendResult sent = template.send("orders", "now", Duration.ofMinutes(1));
				assertThat(isStored(fixture, sent.id())).isTrue();
				status.setRollbackOnly();
			});
		}
	}

	@Test
	void sendFromAnotherSynchronizationsAfterCommitIsStored() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			SendResult[] sent = new SendResult[1];
			transactions().executeWithoutResult((status) -> TransactionSynchronizationManager.registerSynchronization(
					afterCommit(() -> sent[0] = template.send("orders", "timeout", Duration.ofMinutes(30)))));
			assertThat(sent[0]).isNotNull();
			assertThat(isStored(fixture, sent[0].id())).isTrue();
		}
	}

	@Test
	void sendFromAfterCommitThatRunsAfterOurOwnFlushIsStored() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			SendResult[] sent = new SendResult[2];
			transactions().executeWithoutResult((status) -> {
				sent[0] = template.send("orders", "in the transaction", Duration.ofMinutes(30));
				TransactionSynchronizationManager.registerSynchronization(
						afterCommit(() -> sent[1] = template.send("orders", "after commit", Duration.ofMinutes(30))));
			});
			assertThat(isStored(fixture, sent[0].id())).isTrue();
			assertThat(isStored(fixture, sent[1].id())).isTrue();
		}
	}

	@Test
	void sendFromATransactionalEventListenerAfterCommitIsStored() {
		try (TestStore fixture = TestStore.create();
				AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.registerBean(DelayQueueTemplate.class, fixture::template);
			context.register(EventListenerConfig.class);
			context.refresh();
			TransactionTemplate transactions = new TransactionTemplate(
					context.getBean(PlatformTransactionManager.class));
			transactions.executeWithoutResult(
					(status) -> ((ApplicationEventPublisher) context).publishEvent(new OrderCommitted("order-7")));
			assertThat(isStored(fixture, "timeout-order-7")).isTrue();
		}
	}

	@Test
	void sendsOfARequiresNewTransactionThatCommitsAreStoredWhenTheOuterOneRollsBack() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			InMemoryTransactionManager manager = new InMemoryTransactionManager();
			SendResult[] sent = new SendResult[2];
			new TransactionTemplate(manager).executeWithoutResult((outer) -> {
				sent[0] = template.send("orders", "outer", Duration.ofMinutes(1));
				requiresNew(manager)
					.executeWithoutResult((inner) -> sent[1] = template.send("orders", "inner", Duration.ofMinutes(1)));
				assertThat(isStored(fixture, sent[1].id())).as("inner, after its commit").isTrue();
				outer.setRollbackOnly();
			});
			assertThat(isStored(fixture, sent[0].id())).isFalse();
			assertThat(isStored(fixture, sent[1].id())).isTrue();
		}
	}

	@Test
	void sendsOfARequiresNewTransactionThatRollsBackAreDroppedWhenTheOuterOneCommits() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			InMemoryTransactionManager manager = new InMemoryTransactionManager();
			SendResult[] sent = new SendResult[3];
			new TransactionTemplate(manager).executeWithoutResult((outer) -> {
				sent[0] = template.send("orders", "outer", Duration.ofMinutes(1));
				requiresNew(manager).executeWithoutResult((inner) -> {
					sent[1] = template.send("orders", "inner", Duration.ofMinutes(1));
					inner.setRollbackOnly();
				});
				sent[2] = template.send("orders", "outer again", Duration.ofMinutes(1));
			});
			assertThat(isStored(fixture, sent[0].id())).isTrue();
			assertThat(isStored(fixture, sent[1].id())).isFalse();
			assertThat(isStored(fixture, sent[2].id())).isTrue();
		}
	}

	@Test
	void sendsOfAJoiningTransactionWaitForTheOuterCommitAndAreDroppedWithItsRollback() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			InMemoryTransactionManager manager = new InMemoryTransactionManager();
			SendResult[] sent = new SendResult[1];
			new TransactionTemplate(manager).executeWithoutResult((outer) -> {
				new TransactionTemplate(manager).executeWithoutResult(
						(inner) -> sent[0] = template.send("orders", "joined", Duration.ofMinutes(1)));
				assertThat(isStored(fixture, sent[0].id())).isFalse();
				outer.setRollbackOnly();
			});
			assertThat(isStored(fixture, sent[0].id())).isFalse();
		}
	}

	@Test
	void sendWithoutTransactionInsideATransactionIsStoredAtOnce() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			InMemoryTransactionManager manager = new InMemoryTransactionManager();
			TransactionTemplate notSupported = new TransactionTemplate(manager);
			notSupported.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
			SendResult[] sent = new SendResult[1];
			new TransactionTemplate(manager).executeWithoutResult((outer) -> {
				notSupported
					.executeWithoutResult((none) -> sent[0] = template.send("orders", "now", Duration.ofMinutes(1)));
				assertThat(isStored(fixture, sent[0].id())).isTrue();
				outer.setRollbackOnly();
			});
			assertThat(isStored(fixture, sent[0].id())).isTrue();
		}
	}

	@Test
	void aCancelInTheTransactionOfTheSendDropsTheHeldSendSoNothingIsStoredAtCommit() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			boolean[] cancelled = new boolean[1];
			transactions().executeWithoutResult((status) -> {
				template
					.send(DelayMessage.builder("orders", "timeout").id("pay-1").delay(Duration.ofMinutes(30)).build());
				cancelled[0] = template.cancel("orders", "pay-1");
			});
			assertThat(cancelled[0]).isTrue();
			assertThat(isStored(fixture, "pay-1")).isFalse();
		}
	}

	@Test
	void aCancelInTheTransactionOfAReplacingSendOfAStoredIdCancelsTheStoredMessageToo() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			template.send(DelayMessage.builder("orders", "timeout").id("pay-2").delay(Duration.ofMinutes(30)).build());
			boolean[] cancelled = new boolean[1];
			transactions().executeWithoutResult((status) -> {
				template.send(DelayMessage.builder("orders", "timeout v2")
					.id("pay-2")
					.delay(Duration.ofMinutes(30))
					.replaceIfPending()
					.build());
				cancelled[0] = template.cancel("orders", "pay-2");
			});
			assertThat(cancelled[0]).isTrue();
			assertThat(isStored(fixture, "pay-2")).isFalse();
		}
	}

	@Test
	void aRescheduleInTheTransactionOfTheSendGivesTheHeldSendItsNewDueTime() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			boolean[] rescheduled = new boolean[1];
			transactions().executeWithoutResult((status) -> {
				template.sendAll(List
					.of(DelayMessage.builder("orders", "timeout").id("pay-1").delay(Duration.ofMinutes(30)).build()));
				rescheduled[0] = template.reschedule("orders", "pay-1", Duration.ofDays(2));
			});
			assertThat(rescheduled[0]).isTrue();
			// Sent due in 30 minutes, rescheduled to two days (the Redis of the tests is
			// local).
			long inADay = System.currentTimeMillis() + Duration.ofDays(1).toMillis();
			assertThat(fixture.store().inspect("orders", "pay-1", 16).score()).isGreaterThan(inADay);
		}
	}

	@Test
	void aCancelInARequiresNewTransactionDropsTheSendTheOuterTransactionHolds() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			InMemoryTransactionManager manager = new InMemoryTransactionManager();
			boolean[] done = new boolean[2];
			new TransactionTemplate(manager).executeWithoutResult((outer) -> {
				template
					.send(DelayMessage.builder("orders", "timeout").id("pay-3").delay(Duration.ofMinutes(30)).build());
				template
					.send(DelayMessage.builder("orders", "timeout").id("pay-4").delay(Duration.ofMinutes(30)).build());
				requiresNew(manager).executeWithoutResult((inner) -> {
					done[0] = template.cancel("orders", "pay-3");
					done[1] = template.reschedule("orders", "pay-4", Duration.ofDays(2));
				});
			});
			assertThat(done).containsExactly(true, true);
			assertThat(isStored(fixture, "pay-3")).isFalse();
			long inADay = System.currentTimeMillis() + Duration.ofDays(1).toMillis();
			assertThat(fixture.store().inspect("orders", "pay-4", 16).score()).isGreaterThan(inADay);
		}
	}

	@Test
	void aCancelInATransactionOfAMessageSentBeforeItGoesToRedisAtOnce() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueTemplate template = fixture.template();
			template.send(DelayMessage.builder("orders", "timeout").id("pay-1").delay(Duration.ofMinutes(30)).build());
			transactions().executeWithoutResult((status) -> {
				template
					.send(DelayMessage.builder("orders", "another").id("pay-2").delay(Duration.ofMinutes(30)).build());
				assertThat(template.cancel("orders", "pay-1")).isTrue();
				assertThat(isStored(fixture, "pay-1")).isFalse();
				status.setRollbackOnly();
			});
			assertThat(isStored(fixture, "pay-1")).isFalse();
		}
	}

	private static TransactionTemplate requiresNew(PlatformTransactionManager manager) {
		TransactionTemplate requiresNew = new TransactionTemplate(manager);
		requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		return requiresNew;
	}

	private static TransactionSynchronization afterCommit(Runnable action) {
		return new TransactionSynchronization() {

			@Override
			public void afterCommit() {
				action.run();
			}

		};
	}

	private static boolean isStored(TestStore fixture, String id) {
		String key = fixture.store().keys("orders").messages();
		return Boolean.TRUE.equals(fixture.redis().opsForHash().hasKey(key, id));
	}

	private static TransactionTemplate transactions() {
		return new TransactionTemplate(new InMemoryTransactionManager());
	}

	record OrderCommitted(String orderId) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class EventListenerConfig {

		@Bean
		PlatformTransactionManager transactionManager() {
			return new InMemoryTransactionManager();
		}

		@Bean
		OrderTimeouts orderTimeouts(DelayQueueTemplate template) {
			return new OrderTimeouts(template);
		}

	}

	static class OrderTimeouts {

		private final DelayQueueTemplate template;

		OrderTimeouts(DelayQueueTemplate template) {
			this.template = template;
		}

		@TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
		void scheduleTimeout(OrderCommitted event) {
			this.template.send(DelayMessage.builder("orders", event.orderId())
				.id("timeout-" + event.orderId())
				.delay(Duration.ofMinutes(30))
				.build());
		}

	}

	/**
	 * A transaction manager with no resource, enough to drive transaction
	 * synchronization: it knows the transaction of the current thread, so that
	 * transactions join, suspend and resume.
	 */
	static class InMemoryTransactionManager extends AbstractPlatformTransactionManager {

		private final ThreadLocal<Object> current = new ThreadLocal<>();

		@Override
		protected Object doGetTransaction() {
			return new Transaction(this.current.get());
		}

		@Override
		protected boolean isExistingTransaction(Object transaction) {
			return ((Transaction) transaction).active != null;
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
			((Transaction) transaction).active = new Object();
			this.current.set(((Transaction) transaction).active);
		}

		@Override
		protected Object doSuspend(Object transaction) {
			Object suspended = this.current.get();
			((Transaction) transaction).active = null;
			this.current.remove();
			return suspended;
		}

		@Override
		protected void doResume(Object transaction, Object suspendedResources) {
			this.current.set(suspendedResources);
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
		}

		@Override
		protected void doSetRollbackOnly(DefaultTransactionStatus status) {
		}

		@Override
		protected void doCleanupAfterCompletion(Object transaction) {
			this.current.remove();
		}

		private static final class Transaction {

			private Object active;

			private Transaction(Object active) {
				this.active = active;
			}

		}

	}

}
