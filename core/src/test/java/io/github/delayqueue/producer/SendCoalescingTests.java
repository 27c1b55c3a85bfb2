package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends to one topic that are on their way at the same moment go to Redis together, in
 * fewer script calls than messages, each still with its own result, in order, and each
 * failing on its own ids.
 */
class SendCoalescingTests {

	private final String prefix = TestStore.uniquePrefix();

	@Test
	void sendsFromManyThreadsAtOnceTakeFewerScriptCallsThanMessagesAndEachGetsItsOwnResult() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).behindProxy().build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			DelayQueueTemplate template = fixture.template();
			template.send("orders", "warm up", Duration.ofHours(1));
			// A Redis a few ms away, so that sends meet on their way.
			proxy.latency(Duration.ofMillis(3));
			int before = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL"));
			ExecutorService senders = Executors.newFixedThreadPool(8);
			try {
				List<Future<List<String>>> sent = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					int thread = t;
					sent.add(senders.submit(() -> {
						List<String> ids = new ArrayList<>();
						for (int i = 0; i < 100; i++) {
							String id = "t" + thread + "-" + i;
							SendResult result = template.send(DelayMessage.builder("orders", "order " + id)
								.id(id)
								.delay(Duration.ofHours(1))
								.build());
							assertThat(result.duplicate()).isFalse();
							ids.add(result.id());
						}
						return ids;
					}));
				}
				for (int t = 0; t < 8; t++) {
					List<String> ids = sent.get(t).get();
					assertThat(ids).hasSize(100).startsWith("t" + t + "-0").endsWith("t" + t + "-99");
				}
			}
			finally {
				senders.shutdownNow();
			}
			int scripts = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL")) - before;
			assertThat(scripts).isLessThan(800);
			assertThat(fixture.store().stats("orders").scheduled()).isEqualTo(801);
		}
	}

	@Test
	void aBatchOfTenThousandMessagesToARedisAQuarterSecondAwayIsStoredWithinAThreeSecondSendTimeout() throws Exception {
		try (TestStore fixture = TestStore.builder()
			.prefix(this.prefix)
			.behindProxy()
			.sendTimeout(Duration.ofSeconds(3))
			.build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			DelayQueueTemplate template = fixture.template();
			// A first batch on a near Redis, so that the one measured against the
			// timeout runs warm.
			template.sendAll(batch("warm-up-"));
			// Forty calls of 250 messages: written back to back, they cost one
			// round trip (a quarter second, and the time Redis takes to run them,
			// even on a busy machine); two at a time, twenty (five seconds).
			proxy.latency(Duration.ofMillis(250));
			List<SendResult> results = template.sendAll(batch("o-"));
			assertThat(results).hasSize(10_000).noneMatch(SendResult::duplicate);
			assertThat(results.get(9_999).id()).isEqualTo("o-9999");
			assertThat(fixture.store().stats("orders").scheduled()).isEqualTo(20_000);
		}
	}

	private static List<DelayMessage> batch(String idPrefix) {
		List<DelayMessage> batch = new ArrayList<>();
		for (int i = 0; i < 10_000; i++) {
			batch.add(DelayMessage.builder("orders", "order " + i).id(idPrefix + i).delay(Duration.ofHours(1)).build());
		}
		return batch;
	}

	@Test
	void asynchronousSendsOfOneIdMetOnTheirWayStoreOneMessageAndReportTheOtherAsADuplicate() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			DelayQueueTemplate template = fixture.template();
			List<CompletableFuture<SendResult>> sent = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				sent.add(template.sendAsync(DelayMessage.builder("orders", "body " + i)
					.id("o-" + (i % 100))
					.delay(Duration.ofHours(1))
					.build()));
			}
			for (int i = 0; i < 200; i++) {
				SendResult result = sent.get(i).get();
				assertThat(result.id()).isEqualTo("o-" + (i % 100));
				assertThat(result.duplicate()).as("send %d", i).isEqualTo(i >= 100);
			}
			RedisMessageStore store = fixture.store();
			assertThat(store.stats("orders").scheduled()).isEqualTo(100);
		}
	}

	@Test
	void sendsWaitingBehindACallRedisDoesNotAnswerFailWithinTheSendTimeoutEachWithItsOwnIds() {
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			try (TestStore fixture = TestStore.builder()
				.prefix(this.prefix)
				.on(server.host(), server.port())
				.sendTimeout(Duration.ofMillis(300))
				.build()) {
				DelayQueueTemplate template = fixture.template();
				template.send("orders", "warm up", Duration.ofHours(1));
				// Redis holds every client's commands for 1.5 s.
				server.command("CLIENT", "PAUSE", "1500", "ALL");
				List<CompletableFuture<SendResult>> sent = new ArrayList<>();
				for (int i = 0; i < 50; i++) {
					sent.add(template.sendAsync(DelayMessage.builder("orders", "order").id("o-" + i).build()));
				}
				for (int i = 0; i < 50; i++) {
					String id = "o-" + i;
					assertThat(sent.get(i)).failsWithin(Duration.ofMillis(1200))
						.withThrowableOfType(ExecutionException.class)
						.havingCause()
						.isInstanceOfSatisfying(SendFailedException.class,
								(failure) -> assertThat(failure.messageIds()).containsExactly(id));
				}
			}
		}
	}

}
