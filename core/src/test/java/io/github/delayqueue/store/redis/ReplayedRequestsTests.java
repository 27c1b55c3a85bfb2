package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests whose reply is lost on the way back: Redis ran them, the proxy drops the reply
 * and the connection, and Lettuce sends the same command again after it reconnects. Each
 * must do what it did once, as the real client stack sends it.
 */
class ReplayedRequestsTests {

	private static final String TOPIC = "jobs";

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final Duration WAIT = Duration.ofSeconds(10);

	@Test
	void claimSentAgainReturnsTheMessagesItLeasedAndNoOthers() {
		run((proxy, template, store, redis) -> {
			for (String id : List.of("m1", "m2", "m3")) {
				send(template, id);
			}
			Transitions.promote(store, TOPIC, 10);
			Transitions.claim(store, TOPIC, "consumer", "consumer.0", 1, 0, Duration.ofMillis(1)); // loads
			// the
			// script
			Transitions.release(store, TOPIC, "m1", "consumer.0");
			int before = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"));
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			ClaimResult claimed = Transitions.claim(store, TOPIC, "consumer", "consumer.1", 2, 0, LEASE);
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA")) - before).as("sent twice").isEqualTo(2);
			assertThat(claimed.messages()).extracting(ClaimedMessage::id).containsExactly("m1", "m2");
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("m3");
			assertThat(Transitions.ack(store, TOPIC, List.of("m1", "m2"), List.of("consumer.1", "consumer.1")))
				.containsExactly(true, true);
		});
	}

	@Test
	void leaseExtensionSentAgainKeepsTheLease() {
		run((proxy, template, store, redis) -> {
			send(template, "m1");
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage claimed = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			Transitions.extendLease(store, TOPIC, "m1", claimed.leaseToken(), LEASE); // loads
																						// the
			// script
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			long extended = Transitions.extendLease(store, TOPIC, "m1", claimed.leaseToken(), LEASE);
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(extended).isPositive();
			assertThat(Transitions.ack(store, TOPIC, "m1", claimed.leaseToken())).isTrue();
		});
	}

	@Test
	void sendSentAgainReportsTheMessageAsStoredOnce() {
		run((proxy, template, store, redis) -> {
			send(template, "warm-up");
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			SendResult sent = template.send(DelayMessage.builder(TOPIC, "new order").delay(LEASE).build());
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(sent.duplicate()).isFalse();
			assertThat(store.stats(TOPIC).scheduled()).isEqualTo(2);
		});
	}

	@Test
	void aSendSentAgainAfterItsReplyWasLostIsReportedAsStoredThoughAReplacingSendOfItsIdFollowedIt() {
		run((proxy, template, store, redis) -> {
			send(template, "warm-up");
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			// Both sends reach Redis together, before the reply to the first is lost.
			proxy.pause();
			CompletableFuture<SendResult> first = template
				.sendAsync(DelayMessage.builder(TOPIC, "first").id("o-1").delay(LEASE).build());
			CompletableFuture<SendResult> replacing = template
				.sendAsync(DelayMessage.builder(TOPIC, "second").id("o-1").delay(LEASE).replaceIfPending().build());
			proxy.resume();
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(first.join().duplicate()).isFalse();
			assertThat(replacing.join().replaced()).isTrue();
			MessageSnapshot stored = store.inspect(TOPIC, "o-1", 1000);
			assertThat(new String(MessageFormat.decode("o-1", stored.storedPrefix()).payload(), StandardCharsets.UTF_8))
				.contains("second");
		});
	}

	@Test
	void cancelSentAgainAfterItsReplyWasLostReportsTheMessageCancelled() {
		run((proxy, template, store, redis) -> {
			send(template, "o-1", LEASE);
			store.cancel(TOPIC, "unknown"); // loads the script
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			boolean cancelled = store.cancel(TOPIC, "o-1");
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(cancelled).as("what cancel returned").isTrue();
			assertThat(store.inspect(TOPIC, "o-1", 100)).isNull();
		});
	}

	@Test
	void aCancelRequestRunAgainCancelsNothingSentUnderItsIdMeanwhile() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			StringRedisTemplate redis = fixture.redis();
			TopicKeys keys = store.keys(TOPIC);
			DefaultRedisScript<Long> cancel = new DefaultRedisScript<>(ScriptSource.read("server_clock")
					+ ScriptSource.read("publish_signal") + ScriptSource.script("cancel"), Long.class);
			List<String> cancelKeys = List.of(keys.messages(), keys.scheduled(), keys.inFlight(), keys.priorities(),
					keys.partitionCount(), keys.cancels(), keys.groups(), keys.groupWaits());
			send(fixture.template(), "o-1", LEASE);
			assertThat(redis.execute(cancel, cancelKeys, "o-1", "1", "request-1")).isOne();
			send(fixture.template(), "o-1", LEASE);

			assertThat(redis.execute(cancel, cancelKeys, "o-1", "1", "request-1")).as("the same request again").isOne();
			assertThat(store.inspect(TOPIC, "o-1", 100)).as("the message sent again").isNotNull();
			assertThat(redis.getExpire(keys.cancels())).isBetween(1L, 60L);
			assertThat(redis.execute(cancel, cancelKeys, "o-1", "1", "request-2")).as("another request").isOne();
			assertThat(store.inspect(TOPIC, "o-1", 100)).isNull();
			assertThat(redis.execute(cancel, cancelKeys, "o-1", "1", "request-3")).as("nothing left").isZero();
		}
	}

	@Test
	void purgeOfTheOldestDeadLettersSentAgainDeletesNoMore() {
		run((proxy, template, store, redis) -> {
			for (String id : List.of("d1", "d2", "d3")) {
				send(template, id);
				Transitions.promote(store, TOPIC, 10);
				ClaimedMessage claimed = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
				Transitions.deadLetter(store, TOPIC, id, claimed.leaseToken(), "boom");
			}
			store.purgeDead(TOPIC, List.of("unknown")); // loads the script
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			store.purgeDead(TOPIC, 1);
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(store.page(TOPIC, MessageState.DEAD, 0, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("d2", "d3");
		});
	}

	private static void send(DelayQueueTemplate template, String id) {
		template.send(DelayMessage.builder(TOPIC, "payload of " + id).id(id).build());
	}

	private static void send(DelayQueueTemplate template, String id, Duration delay) {
		template.send(DelayMessage.builder(TOPIC, "payload of " + id).id(id).delay(delay).build());
	}

	private static void run(ProxyTest test) {
		TestRedis redis = TestRedis.shared();
		try (TestStore fixture = TestStore.builder().behindProxy().build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			test.run(proxy, fixture.template(), fixture.store(), fixture.redis());
		}
	}

	@FunctionalInterface
	private interface ProxyTest {

		void run(FaultyRedisProxy proxy, DelayQueueTemplate template, RedisMessageStore store,
				StringRedisTemplate redis);

	}

}
