package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static io.github.delayqueue.testsupport.PartitionApps.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

/**
 * A call by id that a partition refused (which stored and changed nothing) is run once
 * more after the store settled the count, alone: the calls of the same {@code sendAll},
 * replay or purge that other partitions accepted are not run again, so nothing is stored
 * twice and each result says what was done. The refusing partition here has a marker left
 * behind by a change that never took effect (as in
 * {@code PartitionCountTests.aMarkerLeftByAChangeThatNeverTookEffectIsRepairedByTheCallItRefuses}).
 */
class PartitionRefusalTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final String LEFT_BEHIND = "1:a0b1c2d3";

	/**
	 * A send of two messages, one due now in partition 0 and one in partition 2, whose
	 * marker refuses: partition 0 stores its message, the store settles (widened here by
	 * holding one reply for a second) while the message is delivered and acknowledged,
	 * and only the refused call is sent again: the delivered message is not stored anew.
	 */
	@Test
	void aSendRunAgainAfterARefusalDoesNotStoreAgainAMessageDeliveredMeanwhile() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			sender.agreePartitions(TOPIC);
			RedisMessageStore listener = apps.store(3, TIMEOUT);
			listener.agreePartitions(TOPIC);
			apps.redis().opsForValue().set(apps.markerOf(sender, 2, 3), LEFT_BEHIND);
			String now = idIn(0, 3, "now-");
			String later = idIn(2, 3, "later-");
			// Replies 1 and 2: the send (stored, refused); 3: the settle's first read.
			AtomicInteger replies = new AtomicInteger();
			FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(
					(name) -> name.equals("EVALSHA") && replies.incrementAndGet() == 3, Duration.ofSeconds(1));
			CompletableFuture<List<Sent>> sending = CompletableFuture.supplyAsync(() -> sender.send(TOPIC,
					List.of(message(now, Duration.ZERO), message(later, Duration.ofHours(1)))));
			assertThat(held.awaitFired(Duration.ofSeconds(10))).isTrue();
			Transitions.promote(listener, TOPIC, 10);
			List<ClaimedMessage> claimed = Transitions.claim(listener, TOPIC, 10, Duration.ofMinutes(1));
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(now);
			assertThat(Transitions.ack(listener, TOPIC, now, claimed.get(0).leaseToken())).isTrue();

			assertThat(sending.join()).extracting(Sent::id).containsExactly(now, later);
			assertThat(listener.inspect(TOPIC, now, 10)).as("%s, delivered and acknowledged, stored again", now)
				.isNull();
		}
	}

	/**
	 * A replay and a purge of two ids, one dead in partition 0 and one in partition 2,
	 * whose marker refuses: each reports what it did in partition 0, since only the
	 * refused partition's call runs again.
	 */
	@Test
	void aReplayOrPurgeRunAgainAfterARefusalReportsWhatItDid() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore three = apps.store(3, TIMEOUT);
			three.agreePartitions(TOPIC);
			String replayed = idIn(0, 3, "replayed-");
			String purged = idIn(0, 3, "purged-");
			PartitionApps.deadLetter(three, replayed);
			PartitionApps.deadLetter(three, purged);
			String absent = idIn(2, 3, "absent-");

			apps.redis().opsForValue().set(apps.markerOf(three, 2, 3), LEFT_BEHIND);
			ReplayResult replay = three.replayDead(TOPIC, List.of(replayed, absent));
			apps.redis().opsForValue().set(apps.markerOf(three, 2, 3), LEFT_BEHIND);
			long purge = three.purgeDead(TOPIC, List.of(purged, absent));

			assertThat(three.stats(TOPIC).dead()).isZero();
			assertThat(three.stats(TOPIC).scheduled()).isEqualTo(1);
			assertSoftly((softly) -> {
				softly.assertThat(replay.replayed()).as("replayed").containsExactly(replayed);
				softly.assertThat(purge).as("purged").isEqualTo(1);
			});
		}
	}

	/**
	 * A replacing send ({@code replaceIfPending()}) of a new id in partition 0, sent with
	 * one in partition 2, whose marker refuses: the new message is reported stored, not
	 * replaced, as its call is not run twice.
	 */
	@Test
	void aReplacingSendOfANewMessageIsNotReportedAsReplacedAfterARefusal() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore three = apps.store(3, TIMEOUT);
			three.agreePartitions(TOPIC);
			apps.redis().opsForValue().set(apps.markerOf(three, 2, 3), LEFT_BEHIND);
			String fresh = idIn(0, 3, "fresh-");

			List<Sent> sent = three.send(TOPIC, List.of(message(fresh, Duration.ofHours(1)).replacingPending(),
					message(idIn(2, 3, "other-"), Duration.ofHours(1))));

			assertThat(sent.get(0).duplicate()).isFalse();
			assertThat(sent.get(0).replaced()).as("%s, new, reported replaced", fresh).isFalse();
		}
	}

	/**
	 * When the call run again is refused again (here the marker is left behind once more
	 * while the settle's repair reply is on its way), the exception names the topic that
	 * was refused ({@code clicks}, 3 partitions), not the first topic of the batch.
	 */
	@Test
	void aBatchRefusedAgainNamesTheTopicThatWasRefused() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			sender.agreePartitions("orders");
			sender.agreePartitions(TOPIC);
			String marker = apps.markerOf(sender, 2, 3);
			apps.redis().opsForValue().set(marker, LEFT_BEHIND);
			// Replies 1-2: the send; 3-4, 5: the markers and the count of clicks (only
			// the refused topic settles); 6: the repair of the marker.
			AtomicInteger replies = new AtomicInteger();
			FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(
					(name) -> name.equals("EVALSHA") && replies.incrementAndGet() == 6, Duration.ofSeconds(1));
			Map<String, List<NewMessage>> batch = new LinkedHashMap<>();
			batch.put("orders", List.of(message("order-1", Duration.ofHours(1))));
			batch.put(TOPIC, List.of(message(idIn(2, 3, "click-"), Duration.ofHours(1))));
			CompletableFuture<Map<String, List<Sent>>> sending = CompletableFuture
				.supplyAsync(() -> sender.send(batch));
			assertThat(held.awaitFired(Duration.ofSeconds(10))).isTrue();
			assertThat(apps.redis().opsForValue().get(marker)).isEqualTo("3");
			apps.redis().opsForValue().set(marker, LEFT_BEHIND);

			assertThatThrownBy(sending::join).hasCauseInstanceOf(PartitionCountException.class)
				.cause()
				.hasMessageContaining("Topic 'clicks'");
		}
	}

}
