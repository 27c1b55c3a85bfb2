package io.github.delayqueue.store.redis;

import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.WakeUpListener;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TcpForwarder;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The wake-up signal subscription on the prefix's channel: neither subscribing nor
 * closing holds up its caller longer than the store's timeout while Redis does not
 * answer, and once it answers the signals arrive; a Redis that refuses connections fails
 * the subscription at once, so that a start without Redis gets a clear answer (reviews
 * 21, 21b and 21c).
 */
class RedisSignalsTests {

	@Test
	void aSubscriptionRedisDoesNotAnswerReturnsWithinTheTimeoutAndSubscribesOnceRedisAnswers() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(Duration.ofSeconds(1)).build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			RedisMessageStore store = fixture.store();
			store.ping();
			Signals signals = new Signals();
			proxy.pause();
			long start = System.nanoTime();
			AutoCloseable subscription = store.subscribe(List.of("orders"), signals);
			try {
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(store.timeout().plusSeconds(2));
				proxy.resume();
				StringRedisTemplate template = fixture.redis();
				await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
					template.convertAndSend(store.signalChannel(), "rorders");
					assertThat(signals.ready).contains("orders");
				});
			}
			finally {
				subscription.close();
			}
		}
	}

	@Test
	void signalsReachTheListenerByKind() throws Exception {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			Signals signals = new Signals();
			try (AutoCloseable subscription = store.subscribe(List.of("orders"), signals)) {
				StringRedisTemplate template = fixture.redis();
				template.convertAndSend(store.signalChannel(), "borders");
				template.convertAndSend(store.signalChannel(), "rinvoices");
				template.convertAndSend(store.signalChannel(), "");
				template.convertAndSend(store.signalChannel(), "xorders");
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(signals.ready).containsExactly("invoices"));
				assertThat(signals.earlier).containsExactly("orders");
			}
		}
	}

	@Test
	void closingASubscriptionStillBeingMadeReturnsAtOnceAndLeavesNothingSubscribed() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(Duration.ofSeconds(1)).build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			RedisMessageStore store = fixture.store();
			store.ping();
			proxy.pause();
			AutoCloseable subscription = store.subscribe(List.of("orders"), new Signals());
			long start = System.nanoTime();
			subscription.close();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(store.timeout().plusSeconds(2));
			proxy.resume();
			StringRedisTemplate template = fixture.redis();
			await().during(Duration.ofSeconds(3))
				.atMost(Duration.ofSeconds(10))
				.until(() -> subscribers(template, store.signalChannel()) == 0);
		}
	}

	@Test
	void closingAMadeSubscriptionWhileRedisDoesNotAnswerReturnsAtOnce() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(Duration.ofSeconds(1)).build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			RedisMessageStore store = fixture.store();
			AutoCloseable subscription = store.subscribe(List.of("orders"), new Signals());
			assertThat(subscribers(fixture.redis(), store.signalChannel())).isEqualTo(1);
			proxy.pause();
			long start = System.nanoTime();
			subscription.close();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(store.timeout().plusSeconds(2));
		}
	}

	@Test
	void aSubscriptionRedisRefusesFailsAtOnceWithTheConnectionFailure() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", TcpForwarder.freePort()));
		factory.afterPropertiesSet();
		factory.start();
		try {
			RedisMessageStore store = new RedisMessageStore(factory, TestStore.uniquePrefix(), Duration.ofSeconds(1));
			long start = System.nanoTime();
			assertThatExceptionOfType(DataAccessException.class)
				.isThrownBy(() -> store.subscribe(List.of("orders"), new Signals()))
				.withRootCauseInstanceOf(ConnectException.class);
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
		}
		finally {
			factory.destroy();
		}
	}

	@SuppressWarnings("unchecked")
	private static long subscribers(StringRedisTemplate template, String channel) {
		return template.execute((RedisCallback<Long>) (connection) -> {
			RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) connection
				.getNativeConnection();
			try {
				return commands.pubsubNumsub(channel.getBytes(StandardCharsets.UTF_8))
					.get(5, TimeUnit.SECONDS)
					.values()
					.stream()
					.mapToLong(Long::longValue)
					.sum();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	static final class Signals implements WakeUpListener {

		final Set<String> earlier = ConcurrentHashMap.newKeySet();

		final Set<String> ready = ConcurrentHashMap.newKeySet();

		@Override
		public void earlierMessage(String partition) {
			this.earlier.add(partition);
		}

		@Override
		public void readyMessages(String partition) {
			this.ready.add(partition);
		}

	}

}
