package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.FaultyRedisProxy;
import io.github.delayqueue.testsupport.PartitionApps;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A send call that stored nothing and is sent again (Redis had lost the script, or a
 * partition refused the count) never overtakes a later send of the same id that was
 * already on its way: the later send is the one stored. Here the reply to the first call
 * is held by a proxy while the second runs; before, the first was sent again after it and
 * replaced it.
 */
class SendOrderTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/**
	 * Long enough for the second send to run on Redis while the first's reply is held.
	 */
	private static final Duration HELD = Duration.ofMillis(500);

	@Test
	void aSendSentAgainAfterRedisLostTheScriptDoesNotReplaceALaterSendOfTheSameId() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			String id = idIn(1, 3, "order-");
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(1, 3, "warm-up-"), Duration.ofHours(1))));
			byte[] sendScript = sender.clock()
				.call(Script.SEND, (key) -> key.name(), List.of(), sender.shardedSignals())
				.script()
				.getScriptAsString()
				.getBytes(StandardCharsets.UTF_8);
			apps.redis().execute((RedisCallback<Void>) (connection) -> {
				connection.scriptingCommands().scriptFlush();
				return null;
			});
			FaultyRedisProxy.Fault held = proxy
				.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "first"), HELD);

			CompletableFuture<?> first = sender.sendAsync(Map.of(TOPIC, List.of(replacing(id, "first"))));
			assertThat(held.awaitFired(TIMEOUT)).isTrue();
			// Another instance loads the script before the second send runs.
			apps.redis()
				.execute((RedisCallback<String>) (connection) -> connection.scriptingCommands().scriptLoad(sendScript));
			CompletableFuture<Map<String, List<Sent>>> second = sender
				.sendAsync(Map.of(TOPIC, List.of(replacing(id, "second"))));

			assertThat(second.join().get(TOPIC)).extracting(Sent::id).containsExactly(id);
			assertThat(first).failsWithin(TIMEOUT);
			assertThat(storedBody(sender, id)).endsWith(":second");
		}
	}

	@Test
	void aSendSentAgainAfterAPartitionRefusedItDoesNotReplaceALaterSendOfTheSameId() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			sender.agreePartitions(TOPIC);
			String id = idIn(2, 3, "order-");
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(2, 3, "warm-up-"), Duration.ofHours(1))));
			String marker = apps.markerOf(sender, 2, 3);
			String agreed = apps.redis().opsForValue().get(marker);
			// A change that never took effect left its marker behind.
			apps.redis().opsForValue().set(marker, "1:a0b1c2d3");
			FaultyRedisProxy.Fault held = proxy
				.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "first"), HELD);

			CompletableFuture<?> first = sender.sendAsync(Map.of(TOPIC, List.of(replacing(id, "first"))));
			assertThat(held.awaitFired(TIMEOUT)).isTrue();
			// The marker is repaired before the second send runs.
			apps.redis().opsForValue().set(marker, agreed);
			CompletableFuture<Map<String, List<Sent>>> second = sender
				.sendAsync(Map.of(TOPIC, List.of(replacing(id, "second"))));

			assertThat(second.join().get(TOPIC)).extracting(Sent::id).containsExactly(id);
			assertThat(first).failsWithin(TIMEOUT);
			assertThat(storedBody(sender, id)).endsWith(":second");
		}
	}

	private static NewMessage replacing(String id, String body) {
		return new NewMessage(id, true, Duration.ofHours(1).toMillis(), body.getBytes(StandardCharsets.UTF_8), true, 0,
				false);
	}

	private static String storedBody(RedisMessageStore store, String id) {
		MessageSnapshot snapshot = store.inspect(TOPIC, id, 100);
		assertThat(snapshot).as("message %s", id).isNotNull();
		return new String(snapshot.storedPrefix(), StandardCharsets.UTF_8);
	}

}
