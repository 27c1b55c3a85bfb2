package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A store on an offset clock ({@link ScriptClock#offsetBy(String)}) sees time pass by the
 * offset at once, in every script: due times, promotion, leases and backoff. A store on
 * the server's clock next to it does not.
 */
class ScriptClockTests {

	private static final Duration HOUR = Duration.ofHours(1);

	private static final byte[] BODY = MessageFormat.encodeBody(Map.of(), new byte[] { 1 });

	@Test
	void theOffsetMovesTheClockOfEveryScriptForward() {
		withStores((server, offset, redis) -> {
			long serverNow = server.stats("jobs").nowMillis();
			redis.opsForValue().set(offset.clock().offsetKey(), String.valueOf(HOUR.toNanos() / 1000));
			assertThat(offset.stats("jobs").nowMillis() - serverNow).isBetween(HOUR.toMillis(),
					HOUR.toMillis() + 5_000);
			assertThat(server.stats("jobs").nowMillis() - serverNow).isLessThan(5_000);
		});
	}

	@Test
	void aMessageDueInAnHourIsPromotedOnceTheOffsetPassesIt() {
		withStores((server, offset, redis) -> {
			long due = offset.send("jobs", List.of(NewMessage.afterDelay("m", HOUR, BODY))).get(0).dueAtMillis();
			assertThat(Transitions.promote(offset, "jobs", 10).moved()).isZero();
			redis.opsForValue().set(offset.clock().offsetKey(), String.valueOf(HOUR.toNanos() / 1000));
			assertThat(Transitions.promote(offset, "jobs", 10).moved()).isOne();
			ClaimedMessage claimed = Transitions.claim(offset, "jobs", 1, Duration.ofSeconds(30)).get(0);
			assertThat(MessageFormat.dueAtMillis(claimed.stored())).isEqualTo(due);
			assertThat(claimed.claimedAt().toEpochMilli()).isGreaterThanOrEqualTo(due);
		});
	}

	@Test
	void leasesAndBackoffCountOnTheOffsetClock() {
		withStores((server, offset, redis) -> {
			offset.send("jobs", List.of(NewMessage.afterDelay("m", Duration.ZERO, BODY)));
			Transitions.promote(offset, "jobs", 10);
			ClaimedMessage claimed = Transitions.claim(offset, "jobs", 1, Duration.ofMinutes(5)).get(0);
			assertThat(Transitions.expireLeases(offset, "jobs", 10, 3).expired()).isZero();
			redis.opsForValue().set(offset.clock().offsetKey(), String.valueOf(Duration.ofMinutes(6).toNanos() / 1000));
			assertThat(Transitions.expireLeases(offset, "jobs", 10, 3).expired()).isOne();
			assertThat(Transitions.promote(offset, "jobs", 10).moved()).isZero();
			claimed = Transitions.claim(offset, "jobs", 1, Duration.ofMinutes(5)).get(0);
			long retryDue = Transitions.retry(offset, "jobs", claimed.id(), claimed.leaseToken(), HOUR, null);
			assertThat(retryDue - offset.stats("jobs").nowMillis()).isBetween(HOUR.toMillis() - 5_000, HOUR.toMillis());
		});
	}

	@Test
	void theOffsetKeyMustBeNamed() {
		assertThatIllegalArgumentException().isThrownBy(() -> ScriptClock.offsetBy(""))
			.withMessageContaining("offset key");
	}

	private static void withStores(StoreTest test) {
		try (TestStore fixture = TestStore.create()) {
			String prefix = fixture.prefix();
			RedisConnectionFactory connections = fixture.connectionFactory();
			RedisMessageStore server = new RedisMessageStore(connections, prefix);
			RedisMessageStore offset = new RedisMessageStore(connections, prefix, RedisMessageStore.DEFAULT_TIMEOUT,
					ScriptClock.offsetBy(prefix + ":clock"));
			test.run(server, offset, fixture.redis());
		}
	}

	@FunctionalInterface
	private interface StoreTest {

		void run(RedisMessageStore server, RedisMessageStore offset, StringRedisTemplate redis);

	}

}
