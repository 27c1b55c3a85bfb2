package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link ScriptRunner} on real Redis, behind a {@link FaultyRedisProxy}: a call whose
 * script is missing from the server's cache goes again in full ({@code EVAL}), and that
 * second command is bounded and cancelled on timeout like the first, so that the client
 * does not send it again after a reconnect; when it fails, the calls sent after it are
 * cancelled too.
 */
class ScriptRunnerTests {

	private static final Duration TIMEOUT = Duration.ofMillis(300);

	@Test
	void anAsynchronousCallSentAgainInFullAfterNoscriptIsCancelledWhenItTimesOut() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess server = TestRedis.startPrivateServer();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(server.host(), server.port())) {
			try (TestStore fixture = TestStore.builder().on(proxy.host(), proxy.port()).sendTimeout(TIMEOUT).build()) {
				RedisMessageStore store = fixture.store();
				StringRedisTemplate redis = fixture.redis();
				Transitions.promote(store, "orders", 10);
				// The script leaves the server's cache: the next call gets NOSCRIPT
				// and
				// goes again as EVAL, whose reply is held past the timeout.
				server.command("SCRIPT", "FLUSH");
				FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(FaultyRedisProxy.named("EVAL"),
						Duration.ofSeconds(5));
				int evals = proxy.forwardedCount(FaultyRedisProxy.named("EVAL"));
				CompletableFuture<PromoteResult> promote = store.topic("orders").promote(10, Duration.ZERO);
				assertThatExceptionOfType(ExecutionException.class)
					.isThrownBy(() -> promote.get(TIMEOUT.multipliedBy(10).toMillis(), TimeUnit.MILLISECONDS))
					.withCauseInstanceOf(QueryTimeoutException.class);
				assertThat(held.awaitFired(Duration.ofSeconds(5))).isTrue();
				// The connection drops with the reply still held: the client
				// reconnects
				// and sends again what it still waits for.
				proxy.cutAll();
				await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> "PONG".equals(ping(redis)));
				assertThat(proxy.forwardedCount(FaultyRedisProxy.named("EVAL")))
					.as("EVAL commands forwarded: %s", proxy.forwardedCommands())
					.isEqualTo(evals + 1);
			}
		}
	}

	@Test
	void whenACallSentAgainInFullTimesOutTheCallsAfterItAreCancelled() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess server = TestRedis.startPrivateServer();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(server.host(), server.port())) {
			try (TestStore fixture = TestStore.builder().on(proxy.host(), proxy.port()).sendTimeout(TIMEOUT).build()) {
				RedisMessageStore store = fixture.store();
				StringRedisTemplate redis = fixture.redis();
				store.send(Map.of("a", List.of(message("a-1")), "b", List.of(message("b-1"))));
				// Both calls of the next send get NOSCRIPT; the reply to the second
				// is
				// held, and with it that of the first call's EVAL, which times out.
				server.command("SCRIPT", "FLUSH");
				AtomicInteger evalshaReplies = new AtomicInteger();
				FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(
						(name) -> name.equals("EVALSHA") && evalshaReplies.incrementAndGet() == 2,
						Duration.ofSeconds(5));
				int evalshas = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"));
				assertThatExceptionOfType(QueryTimeoutException.class)
					.isThrownBy(() -> store.send(Map.of("a", List.of(message("a-2")), "b", List.of(message("b-2")))));
				assertThat(held.awaitFired(Duration.ofSeconds(5))).isTrue();
				proxy.cutAll();
				await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> "PONG".equals(ping(redis)));
				assertThat(proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA")))
					.as("EVALSHA commands forwarded: %s", proxy.forwardedCommands())
					.isEqualTo(evalshas + 2);
			}
		}
	}

	private static NewMessage message(String id) {
		return NewMessage.afterDelay(id, Duration.ofHours(1), MessageFormat.encodeBody(Map.of(), id.getBytes()));
	}

	private static String ping(StringRedisTemplate redis) {
		return redis.execute((RedisCallback<String>) (connection) -> connection.ping());
	}

}
