package io.github.delayqueue.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import io.github.delayqueue.metrics.MicrometerDelayQueueMetrics;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code sendAsync} and {@code sendAllAsync}: the same checks, results, idempotency,
 * transaction awareness and failures as {@code send}, without waiting for Redis.
 */
class AsyncSendTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final String prefix = TestStore.uniquePrefix();

	@Test
	void anAsynchronousSendCompletesWithTheIdAndTheDueTimeOfTheStoredMessage() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			DelayQueueTemplate template = fixture.template();
			SendResult result = template
				.sendAsync(DelayMessage.builder("orders", "order 1").id("o-1").delay(Duration.ofHours(1)).build())
				.get();
			assertThat(result.id()).isEqualTo("o-1");
			assertThat(result.duplicate()).isFalse();
			assertThat(result.dueAt()).isBetween(Instant.now().plus(Duration.ofMinutes(59)),
					Instant.now().plus(Duration.ofMinutes(61)));
			RedisMessageStore store = fixture.store();
			assertThat(store.stats("orders").scheduled()).isOne();
		}
	}

	@Test
	void tenThousandSendsFromOneThreadAreAllStoredEachWithItsOwnResult() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			MeterRegistry meters = new SimpleMeterRegistry();
			DelayQueueTemplate template = fixture.template();
			template.setMetrics(new MicrometerDelayQueueMetrics(meters, new double[0], false));
			List<CompletableFuture<SendResult>> sent = new ArrayList<>();
			for (int i = 0; i < 10_000; i++) {
				sent.add(template.sendAsync(
						DelayMessage.builder("orders", "order " + i).id("o-" + i).delay(Duration.ofHours(1)).build()));
			}
			CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get();
			for (int i = 0; i < sent.size(); i++) {
				assertThat(sent.get(i).get().id()).isEqualTo("o-" + i);
				assertThat(sent.get(i).get().duplicate()).isFalse();
			}
			assertThat(fixture.store().stats("orders").scheduled()).isEqualTo(10_000);
			assertThat(meters.get("delay.queue.sent").tag("topic", "orders").tag("outcome", "sent").counter().count())
				.isEqualTo(10_000);
		}
	}

	@Test
	void anAsynchronousBatchReturnsItsResultsInTheOrderOfItsMessagesAcrossTopicsAndPartitions() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).partitions(Map.of("clicks", 4)).build()) {
			DelayQueueTemplate template = fixture.template();
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 600; i++) {
				messages.add(DelayMessage.builder((i % 3 == 0) ? "orders" : "clicks", "m" + i)
					.id("m-" + i)
					.delay(Duration.ofHours(1))
					.build());
			}
			List<SendResult> results = template.sendAllAsync(messages).get();
			assertThat(results).extracting(SendResult::id)
				.containsExactlyElementsOf(messages.stream().map(DelayMessage::id).toList());
			RedisMessageStore store = fixture.store();
			assertThat(store.stats("orders").scheduled()).isEqualTo(200);
			assertThat(store.stats("clicks").scheduled()).isEqualTo(400);
		}
	}

	@Test
	void anIdStillPendingCompletesAsADuplicateAndTheSameMessageAgainAsStored() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			DelayQueueTemplate template = fixture.template();
			DelayMessage first = DelayMessage.builder("orders", "order 1").id("o-1").delay(Duration.ofHours(1)).build();
			template.sendAsync(first).get();
			assertThat(template.sendAsync(first).get().duplicate()).as("the same message again").isFalse();
			DelayMessage other = DelayMessage.builder("orders", "other").id("o-1").delay(Duration.ofHours(1)).build();
			assertThat(template.sendAsync(other).get().duplicate()).isTrue();
			assertThat(fixture.store().stats("orders").scheduled()).isOne();
		}
	}

	@Test
	void aMessageThatIsNotAcceptableIsRefusedAtOnceAndNothingIsStored() {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).maxPayloadSize(DataSize.ofBytes(10)).build()) {
			DelayQueueTemplate template = fixture.template();
			assertThatExceptionOfType(InvalidMessageException.class)
				.isThrownBy(() -> template.sendAllAsync(List.of(DelayMessage.builder("orders", "small").build(),
						DelayMessage.builder("orders", "far too large a payload").build())))
				.withMessageContaining("delay-queue.max-payload-size");
			assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> template.sendAsync(null));
			assertThat(fixture.store().stats("orders").scheduled()).isZero();
		}
	}

	@Test
	void insideATransactionTheSendIsHeldBackUntilItCommits() {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			new TransactionTemplate(new TransactionalSendTests.InMemoryTransactionManager())
				.executeWithoutResult((status) -> {
					CompletableFuture<SendResult> sent = template
						.sendAsync(DelayMessage.builder("orders", "in a transaction").id("t-1").build());
					assertThat(sent).isCompleted();
					assertThat(store.inspect("orders", "t-1", 10)).isNull();
				});
			assertThat(store.inspect("orders", "t-1", 10)).isNotNull();
		}
	}

	@Test
	void aSendToARedisThatDoesNotAnswerFailsWithinTheSendTimeoutCarryingTheId() {
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
				CompletableFuture<SendResult> sent = template
					.sendAsync(DelayMessage.builder("orders", "order").id("o-1").build());
				assertThat(sent).failsWithin(Duration.ofMillis(1200))
					.withThrowableOfType(ExecutionException.class)
					.havingCause()
					.isInstanceOfSatisfying(SendFailedException.class,
							(failure) -> assertThat(failure.messageIds()).containsExactly("o-1"));
			}
		}
	}

	@Test
	void aBatchThatAPartitionRefusedFailsCarryingEveryIdAndStoresTheRest() {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).partitions(Map.of("clicks", 3)).build()) {
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			store.agreePartitions("clicks");
			RedisMessageStore other = new RedisMessageStore(fixture.connectionFactory(), this.prefix);
			other.usePartitions(TopicPartitions.of(Map.of("clicks", 1)));
			other.agreePartitions("clicks");
			CompletableFuture<List<SendResult>> sent = template.sendAllAsync(
					List.of(DelayMessage.builder("orders", "order").id("order-1").delay(Duration.ofHours(1)).build(),
							DelayMessage.builder("clicks", "click").id("click-1").delay(Duration.ofHours(1)).build()));
			assertThat(sent).failsWithin(WAIT)
				.withThrowableOfType(ExecutionException.class)
				.havingCause()
				.isInstanceOfSatisfying(SendFailedException.class,
						(failure) -> assertThat(failure.messageIds()).containsExactlyInAnyOrder("order-1", "click-1"));
			assertThat(store.inspect("orders", "order-1", 10)).as("order-1, stored").isNotNull();
		}
	}

	@Test
	void manyAsynchronousSendsOfTheSameGeneratedIdsNeverCollide() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			DelayQueueTemplate template = fixture.template();
			List<CompletableFuture<SendResult>> sent = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				sent.add(
						template.sendAsync(DelayMessage.builder("orders", "order").delay(Duration.ofHours(1)).build()));
			}
			HashSet<String> ids = new HashSet<>();
			for (CompletableFuture<SendResult> one : sent) {
				ids.add(one.get().id());
			}
			assertThat(ids).hasSize(1000);
		}
	}

}
