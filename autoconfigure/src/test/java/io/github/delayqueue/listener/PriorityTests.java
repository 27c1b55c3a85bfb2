package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Among due messages that no consumer holds yet, a higher priority is claimed first,
 * however many of a lower one wait; within one priority, in due order. Retries, lease
 * expiry, release and dead-letter replay keep a message's priority, and acknowledging or
 * cancelling it forgets it. A dead letter keeps its priority apart from a new message of
 * its id. Most tests drive the scripts through the store with no listener; the last one
 * runs a listener.
 */
class PriorityTests {

	private static final String TOPIC = "jobs";

	private static final int BACKLOG = 30_000;

	@Test
	void anUrgentMessageThatComesDueBehindALargeReadyBacklogIsClaimedNext() {
		inStore((store, redis) -> {
			List<NewMessage> backlog = new ArrayList<>(BACKLOG);
			for (int i = 0; i < BACKLOG; i++) {
				backlog.add(NewMessage.afterDelay("bulk-" + i, Duration.ZERO, body("bulk")));
			}
			store.send(TOPIC, backlog);
			promoteAll(store);
			assertThat(store.stats(TOPIC).ready()).isEqualTo(BACKLOG);
			assertThat(Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1))).extracting(ClaimedMessage::id)
				.containsExactly("bulk-0");
			store.send(TOPIC, List.of(NewMessage.afterDelay("urgent", Duration.ZERO, body("urgent")).withPriority(9)));
			promoteAll(store);
			assertThat(Transitions.claim(store, TOPIC, 2, Duration.ofMinutes(1))).extracting(ClaimedMessage::id)
				.containsExactly("urgent", "bulk-1");
		});
	}

	@Test
	void withinOnePriorityMessagesAreClaimedInDueOrderAndHigherPrioritiesFirst() {
		inStore((store, redis) -> {
			Instant now = Instant.now();
			store.send(TOPIC,
					List.of(dueAt("low-oldest", now.minusSeconds(9), 0), dueAt("mid-later", now.minusSeconds(2), 5),
							dueAt("high", now.minusSeconds(1), 9), dueAt("mid-earlier", now.minusSeconds(3), 5),
							dueAt("low-newest", now.minusSeconds(1), 0)));
			promoteAll(store);
			assertThat(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1))).extracting(ClaimedMessage::id)
				.containsExactly("high", "mid-earlier", "mid-later", "low-oldest", "low-newest");
		});
	}

	@Test
	void aRetriedMessageKeepsItsPriority() {
		inStore((store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(store, "urgent", 7);
			Transitions.retry(store, TOPIC, "urgent", claimed.leaseToken(), Duration.ZERO, null);
			promoteAll(store);
			assertThat(readyList(redis, store, 7)).containsExactly("urgent");
			assertThat(readyList(redis, store, 0)).isEmpty();
		});
	}

	@Test
	void aMessageWhoseLeaseExpiredGoesBackToTheListOfItsPriority() {
		inStore((store, redis) -> {
			sendAndClaim(store, "urgent", 7, Duration.ZERO);
			assertThat(Transitions.expireLeases(store, TOPIC, 10, 5).requeued()).containsExactly("urgent");
			assertThat(readyList(redis, store, 7)).containsExactly("urgent");
			assertThat(readyList(redis, store, 0)).isEmpty();
		});
	}

	@Test
	void aReleasedMessageGoesBackToTheHeadOfTheListOfItsPriority() {
		inStore((store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(store, "urgent", 3);
			store.send(TOPIC, List.of(message("waiting", 3)));
			promoteAll(store);
			assertThat(readyList(redis, store, 3)).containsExactly("waiting");
			assertThat(Transitions.release(store, TOPIC, "urgent", claimed.leaseToken())).isTrue();
			assertThat(readyList(redis, store, 3)).containsExactly("urgent", "waiting");
		});
	}

	@Test
	void aReplayedDeadLetterKeepsItsPriority() {
		inStore((store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(store, "urgent", 8);
			Transitions.deadLetter(store, TOPIC, "urgent", claimed.leaseToken(), "failed");
			assertThat(store.replayDead(TOPIC, List.of("urgent")).replayed()).containsExactly("urgent");
			promoteAll(store);
			assertThat(readyList(redis, store, 8)).containsExactly("urgent");
		});
	}

	@ParameterizedTest(name = "sent again with priority {0}")
	@ValueSource(ints = { 0, 3 })
	void aReplayedDeadLetterKeepsItsPriorityAfterANewMessageOfItsIdWasSentAndAcknowledged(int priority) {
		inStore((store, redis) -> {
			ClaimedMessage first = sendAndClaim(store, "refund-42", 9);
			assertThat(Transitions.deadLetter(store, TOPIC, "refund-42", first.leaseToken(), "failed")).isTrue();
			assertThat(store.inspect(TOPIC, "refund-42", 100).priority()).isEqualTo(9);
			// Dead letters do not block a send of their id: the new message's priority
			// (none, or another) must not replace the dead letter's, nor must its
			// acknowledgement drop it.
			ClaimedMessage second = sendAndClaim(store, "refund-42", priority);
			assertThat(store.inspect(TOPIC, "refund-42", 100).priority()).isEqualTo(priority);
			assertThat(Transitions.ack(store, TOPIC, "refund-42", second.leaseToken())).isTrue();
			assertThat(store.inspect(TOPIC, "refund-42", 100).priority()).isEqualTo(9);
			assertThat(store.replayDead(TOPIC, List.of("refund-42")).replayed()).containsExactly("refund-42");
			assertThat(store.inspect(TOPIC, "refund-42", 100).priority()).isEqualTo(9);
			promoteAll(store);
			assertThat(readyList(redis, store, 9)).containsExactly("refund-42");
		});
	}

	@Test
	void aDeadLetterAndTheNewMessageOfItsIdThatDiedTooKeepTheirOwnPriorities() {
		inStore((store, redis) -> {
			ClaimedMessage first = sendAndClaim(store, "refund-42", 9);
			Transitions.deadLetter(store, TOPIC, "refund-42", first.leaseToken(), "first failure");
			ClaimedMessage second = sendAndClaim(store, "refund-42", 2);
			assertThat(store.inspect(TOPIC, "refund-42", 100).priority()).isEqualTo(2);
			Transitions.deadLetter(store, TOPIC, "refund-42", second.leaseToken(), "second failure");
			// The earlier dead letter is kept under "<id>~<time it died>", with its
			// priority.
			List<String> dead = store.page(TOPIC, MessageState.DEAD, 0, 10)
				.messages()
				.stream()
				.map(MessageSummary::id)
				.toList();
			assertThat(dead).hasSize(2).contains("refund-42");
			String buried = dead.stream().filter((id) -> !id.equals("refund-42")).findFirst().orElseThrow();
			assertThat(store.inspect(TOPIC, "refund-42", 100).priority()).isEqualTo(2);
			assertThat(store.inspect(TOPIC, buried, 100).priority()).isEqualTo(9);
			assertThat(store.replayDead(TOPIC, dead).replayed()).containsExactlyInAnyOrderElementsOf(dead);
			promoteAll(store);
			assertThat(readyList(redis, store, 9)).containsExactly(buried);
			assertThat(readyList(redis, store, 2)).containsExactly("refund-42");
			assertThat(deadPriorities(redis, store)).isEmpty();
		});
	}

	@Test
	void aMessageDeadLetteredByLeaseExpiryKeepsItsPriorityApartFromTheNewMessageOfItsId() {
		inStore((store, redis) -> {
			sendAndClaim(store, "refund-42", 8, Duration.ZERO);
			assertThat(Transitions.expireLeases(store, TOPIC, 10, 1).deadLettered()).containsExactly("refund-42");
			assertThat(priorities(redis, store)).isEmpty();
			assertThat(deadPriorities(redis, store)).containsOnly(Map.entry("refund-42", "8"));
			ClaimedMessage again = sendAndClaim(store, "refund-42", 0);
			assertThat(Transitions.ack(store, TOPIC, "refund-42", again.leaseToken())).isTrue();
			assertThat(store.replayDead(TOPIC, List.of("refund-42")).replayed()).containsExactly("refund-42");
			assertThat(priorities(redis, store)).containsOnly(Map.entry("refund-42", "8"));
			assertThat(deadPriorities(redis, store)).isEmpty();
		});
	}

	@Test
	void acknowledgingCancellingAndPurgingForgetTheMessagesPriority() {
		inStore((store, redis) -> {
			ClaimedMessage acked = sendAndClaim(store, "acked", 4);
			store.send(TOPIC, List.of(message("cancelled", 4).withPriority(2)));
			ClaimedMessage dead = sendAndClaim(store, "dead", 5);
			Transitions.deadLetter(store, TOPIC, "dead", dead.leaseToken(), "failed");
			assertThat(Transitions.ack(store, TOPIC, "acked", acked.leaseToken())).isTrue();
			assertThat(store.cancel(TOPIC, "cancelled")).isTrue();
			assertThat(priorities(redis, store)).isEmpty();
			assertThat(deadPriorities(redis, store)).containsOnlyKeys("dead");
			assertThat(store.purgeDead(TOPIC, List.of("dead"))).isEqualTo(1);
			assertThat(deadPriorities(redis, store)).isEmpty();
		});
	}

	@Test
	void replacingAPendingMessageReplacesItsPriorityToo() {
		inStore((store, redis) -> {
			store.send(TOPIC,
					List.of(NewMessage.afterDelay("reminder", Duration.ofHours(1), body("x")).withPriority(6)));
			store.send(TOPIC, List.of(NewMessage.afterDelay("reminder", Duration.ZERO, body("y")).replacingPending()));
			assertThat(priorities(redis, store)).isEmpty();
			promoteAll(store);
			assertThat(readyList(redis, store, 0)).containsExactly("reminder");
		});
	}

	@Test
	void aReplacingSendWithoutPriorityInTheSameCallAsTheOriginalDropsItsPriority() {
		inStore((store, redis) -> {
			// A topic that has no priority yet: the call's first message gives it one.
			store.send(TOPIC, List.of(NewMessage.afterDelay("reminder", Duration.ofHours(1), body("x")).withPriority(7),
					NewMessage.afterDelay("reminder", Duration.ZERO, body("y")).replacingPending()));
			assertThat(priorities(redis, store)).isEmpty();
			promoteAll(store);
			assertThat(readyList(redis, store, 7)).isEmpty();
			assertThat(readyList(redis, store, 0)).containsExactly("reminder");
		});
	}

	@Test
	void aMessageCancelledWhileReadyAndSentAgainWithALowerPriorityIsClaimedByItsNewPriority() {
		inStore((store, redis) -> {
			store.send(TOPIC, List.of(message("again", 5)));
			promoteAll(store);
			assertThat(store.cancel(TOPIC, "again")).isTrue();
			// Its id stays in the list of priority 5; sent again with priority 0, it is
			// ready in the ready list too.
			store.send(TOPIC, List.of(message("again", 0), message("mid", 3)));
			promoteAll(store);
			assertThat(readyList(redis, store, 5)).containsExactly("again");
			assertThat(store.page(TOPIC, MessageState.READY, 0, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("mid", "again");
			assertThat(Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1))).extracting(ClaimedMessage::id)
				.containsExactly("mid");
			assertThat(readyList(redis, store, 5)).isEmpty();
			assertThat(Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1))).extracting(ClaimedMessage::id)
				.containsExactly("again");
		});
	}

	@Test
	void statsAndPagesCountTheReadyMessagesOfEveryPriority() {
		inStore((store, redis) -> {
			store.send(TOPIC, List.of(message("low-1", 0), message("low-2", 0), message("high", 9), message("mid", 4)));
			promoteAll(store);
			assertThat(store.stats(TOPIC).ready()).isEqualTo(4);
			assertThat(store.stats(TOPIC).readyByPriority()).containsExactly(Map.entry(0, 2L), Map.entry(4, 1L),
					Map.entry(9, 1L));
			assertThat(store.page(TOPIC, MessageState.READY, 0, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("high", "mid", "low-1", "low-2");
			assertThat(store.page(TOPIC, MessageState.READY, 1, 2).messages()).extracting(MessageSummary::id)
				.containsExactly("mid", "low-1");
			assertThat(store.page(TOPIC, MessageState.READY, 0, 10).total()).isEqualTo(4);
		});
	}

	@Test
	void inspectingAMessageShowsItsPriorityInEveryState() {
		inStore((store, redis) -> {
			store.send(TOPIC, List.of(message("ready", 6), message("plain", 0),
					NewMessage.afterDelay("scheduled", Duration.ofHours(1), body("scheduled")).withPriority(2)));
			promoteAll(store);
			assertThat(store.inspect(TOPIC, "ready", 100).priority()).isEqualTo(6);
			assertThat(store.inspect(TOPIC, "plain", 100).priority()).isZero();
			assertThat(store.inspect(TOPIC, "scheduled", 100).priority()).isEqualTo(2);
			ClaimedMessage claimed = Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1)).get(0);
			assertThat(claimed.id()).isEqualTo("ready");
			assertThat(store.inspect(TOPIC, "ready", 100).state()).isEqualTo(MessageState.IN_FLIGHT);
			assertThat(store.inspect(TOPIC, "ready", 100).priority()).isEqualTo(6);
			Transitions.deadLetter(store, TOPIC, "ready", claimed.leaseToken(), "failed");
			assertThat(store.inspect(TOPIC, "ready", 100).state()).isEqualTo(MessageState.DEAD);
			assertThat(store.inspect(TOPIC, "ready", 100).priority()).isEqualTo(6);
		});
	}

	@Test
	void pagesShowThePriorityOfEachMessageInEveryState() {
		inStore((store, redis) -> {
			store.send(TOPIC, List.of(message("ready", 6), message("plain", 0), message("failing", 3),
					NewMessage.afterDelay("scheduled", Duration.ofHours(1), body("scheduled")).withPriority(2)));
			promoteAll(store);
			assertThat(store.page(TOPIC, MessageState.SCHEDULED, 0, 10).messages())
				.extracting(MessageSummary::id, MessageSummary::priority)
				.containsExactly(tuple("scheduled", 2));
			assertThat(store.page(TOPIC, MessageState.READY, 0, 10).messages())
				.extracting(MessageSummary::id, MessageSummary::priority)
				.containsExactly(tuple("ready", 6), tuple("failing", 3), tuple("plain", 0));
			ClaimedMessage ready = Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1)).get(0);
			assertThat(store.page(TOPIC, MessageState.IN_FLIGHT, 0, 10).messages())
				.extracting(MessageSummary::id, MessageSummary::priority)
				.containsExactly(tuple("ready", 6));
			ClaimedMessage failing = Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1)).get(0);
			Transitions.deadLetter(store, TOPIC, failing.id(), failing.leaseToken(), "failed");
			Transitions.ack(store, TOPIC, ready.id(), ready.leaseToken());
			assertThat(store.page(TOPIC, MessageState.DEAD, 0, 10).messages())
				.extracting(MessageSummary::id, MessageSummary::priority)
				.containsExactly(tuple("failing", 3));
		});
	}

	@Test
	void aPartitionedTopicsReadyPagesListEveryMessageOnceInTheOrderClaimTakesThem() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics." + TOPIC + ".partitions=3")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				Instant now = Instant.now();
				List<NewMessage> messages = new ArrayList<>();
				for (int i = 0; i < 12; i++) {
					// The older a message, the lower its priority.
					messages.add(dueAt("m" + i, now.minusSeconds(100 - i), i % 10));
				}
				store.send(TOPIC, messages);
				for (String partition : store.partitions().names(TOPIC)) {
					while (Transitions.promote(store, partition, 5000).moved() > 0) {
						// until nothing due is left in the partition's schedule
					}
				}
				List<MessageSummary> paged = new ArrayList<>();
				for (int offset = 0; offset < 12; offset += 2) {
					paged.addAll(store.page(TOPIC, MessageState.READY, offset, 2).messages());
				}
				assertThat(paged).extracting(MessageSummary::id).hasSize(12).doesNotHaveDuplicates();
				assertThat(paged).extracting(MessageSummary::priority)
					.isSortedAccordingTo((left, right) -> Integer.compare(right, left));
			});
	}

	@Test
	void aPriorityEntryThatIsNoPriorityIsShownWithinZeroToNine() {
		inStore((store, redis) -> {
			store.send(TOPIC,
					List.of(NewMessage.afterDelay("s1", Duration.ofHours(1), body("x")).withPriority(3),
							NewMessage.afterDelay("s2", Duration.ofHours(2), body("x")).withPriority(3),
							NewMessage.afterDelay("s3", Duration.ofHours(3), body("x")).withPriority(3)));
			String priorities = store.keys(TOPIC).priorities();
			redis.opsForHash().put(priorities, "s1", "0x10");
			redis.opsForHash().put(priorities, "s2", "-3");
			redis.opsForHash().put(priorities, "s3", "abc");
			assertThat(store.page(TOPIC, MessageState.SCHEDULED, 0, 10).messages()).extracting(MessageSummary::priority)
				.allSatisfy((priority) -> assertThat(priority).isBetween(0, 9));
		});
	}

	@Test
	void aTopicWithoutPrioritiesUsesNoneOfTheirKeys() {
		inStore((store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(store, "plain", 0);
			Transitions.ack(store, TOPIC, "plain", claimed.leaseToken());
			ClaimedMessage failed = sendAndClaim(store, "failed", 0);
			Transitions.deadLetter(store, TOPIC, "failed", failed.leaseToken(), "failed");
			assertThat(store.stats(TOPIC).readyByPriority()).isEmpty();
			assertThat(priorities(redis, store)).isEmpty();
			assertThat(deadPriorities(redis, store)).isEmpty();
			assertThat(store.replayDead(TOPIC, List.of("failed")).replayed()).containsExactly("failed");
			assertThat(priorities(redis, store)).isEmpty();
		});
	}

	@Test
	void aPriorityOutOfRangeIsRefusedNamingIt() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder(TOPIC, "x").priority(10).build())
			.withMessageContaining("10");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder(TOPIC, "x").priority(-1).build())
			.withMessageContaining("-1");
		assertThat(DelayMessage.builder(TOPIC, "x").build().priority()).isZero();
	}

	@Test
	void theListenerGetsTheUrgentMessageBeforeTheOthersThatCameDueWithIt() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Recorder.class)
			.withPropertyValues("delay-queue.topics.orders.concurrency=1")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				Recorder recorder = context.getBean(Recorder.class);
				Instant due = Instant.now().plusSeconds(2);
				List<DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < 50; i++) {
					messages.add(DelayMessage.builder("orders", "routine").id("routine-" + i).dueAt(due).build());
				}
				messages.add(DelayMessage.builder("orders", "urgent").id("urgent").dueAt(due).priority(9).build());
				queue.sendAll(messages);
				await().atMost(Duration.ofSeconds(20)).until(() -> recorder.ids.size() == 51);
				assertThat(recorder.ids.get(0)).isEqualTo("urgent");
				assertThat(recorder.ids).doesNotHaveDuplicates();
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class Recorder {

		final List<String> ids = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders")
		void on(Delivery<String> delivery) {
			this.ids.add(delivery.id());
		}

	}

	private static void inStore(StoreTest test) {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.run((context) -> test.run(context.getBean(RedisMessageStore.class),
					context.getBean(StringRedisTemplate.class)));
	}

	@FunctionalInterface
	private interface StoreTest {

		void run(RedisMessageStore store, StringRedisTemplate redis);

	}

	private static ClaimedMessage sendAndClaim(RedisMessageStore store, String id, int priority) {
		return sendAndClaim(store, id, priority, Duration.ofMinutes(1));
	}

	private static ClaimedMessage sendAndClaim(RedisMessageStore store, String id, int priority, Duration lease) {
		store.send(TOPIC, List.of(message(id, priority)));
		promoteAll(store);
		List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 1, lease);
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		return claimed.get(0);
	}

	private static void promoteAll(RedisMessageStore store) {
		while (Transitions.promote(store, TOPIC, 5000).moved() > 0) {
			// until nothing due is left in the schedule
		}
	}

	private static List<String> readyList(StringRedisTemplate redis, RedisMessageStore store, int priority) {
		return redis.opsForList().range(store.keys(TOPIC).ready(priority), 0, -1);
	}

	private static Map<Object, Object> priorities(StringRedisTemplate redis, RedisMessageStore store) {
		return redis.opsForHash().entries(store.keys(TOPIC).priorities());
	}

	private static Map<Object, Object> deadPriorities(StringRedisTemplate redis, RedisMessageStore store) {
		return redis.opsForHash().entries(store.keys(TOPIC).deadPriorities());
	}

	private static NewMessage message(String id, int priority) {
		return NewMessage.afterDelay(id, Duration.ZERO, body(id)).withPriority(priority);
	}

	private static NewMessage dueAt(String id, Instant dueAt, int priority) {
		return NewMessage.dueAt(id, dueAt, body(id)).withPriority(priority);
	}

	private static byte[] body(String text) {
		return MessageFormat.encodeBody(Map.of(), text.getBytes());
	}

}
