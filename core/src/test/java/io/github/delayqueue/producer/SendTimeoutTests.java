package io.github.delayqueue.producer;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A send waits for Redis at most {@code delay-queue.producer.send-timeout}, whatever the
 * client's own timeout (Spring Boot's default leaves Lettuce at 60 seconds), and a send
 * that is not confirmed throws an exception carrying the id: Redis may have stored the
 * message, and sending it again with that id stores it once.
 */
class SendTimeoutTests {

	/** Keeps the Redis server busy, and deaf to every client, for about four seconds. */
	private static final RedisScript<Long> BUSY = RedisScript.of("""
			local t = redis.call('TIME')
			local start = tonumber(t[1]) * 1000000 + tonumber(t[2])
			local now = start
			while now - start < 4000000 do
			  t = redis.call('TIME')
			  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
			end
			return 1
			""", Long.class);

	@Test
	void sendToABusyRedisFailsWithinTheSendTimeoutNamingTheIdThatIsStoredOnceWhenSentAgain() {
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			try (TestStore fixture = TestStore.builder()
				.on(server.host(), server.port())
				.sendTimeout(Duration.ofMillis(300))
				.build()) {
				DelayQueueTemplate template = fixture.template();
				StringRedisTemplate redis = fixture.redis();
				template.send("orders", "warm up", Duration.ofHours(1));
				CompletableFuture<Long> busy = CompletableFuture.supplyAsync(() -> redis.execute(BUSY, List.of()));
				await().until(() -> busy.isDone() || isBusy(server));
				DelayMessage message = DelayMessage.builder("orders", "order 1").delay(Duration.ofHours(1)).build();
				SendFailedException failure = assertTimeoutPreemptively(Duration.ofMillis(2500),
						() -> assertThatExceptionOfType(SendFailedException.class)
							.isThrownBy(() -> template.send(message))
							.actual());
				assertThat(failure.messageIds()).hasSize(1);
				assertThat(failure.topics()).containsExactly("orders");
				assertThat(failure).hasMessageContaining(failure.messageIds().get(0)).hasMessageContaining("same ids");
				busy.join();
				String id = failure.messageIds().get(0);
				SendResult again = template
					.send(DelayMessage.builder("orders", "order 1").id(id).delay(Duration.ofHours(1)).build());
				assertThat(again.duplicate()).isFalse();
				RedisMessageStore store = fixture.store();
				assertThat(store.stats("orders").scheduled()).isEqualTo(2);
			}
		}
	}

	private static boolean isBusy(RedisServerProcess server) {
		try (Socket socket = new Socket(server.host(), server.port())) {
			socket.setSoTimeout(200);
			socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			int first = socket.getInputStream().read();
			// A busy server answers "-BUSY ..." only after its script limit; before that,
			// nothing.
			return first != '+';
		}
		catch (SocketTimeoutException ex) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
