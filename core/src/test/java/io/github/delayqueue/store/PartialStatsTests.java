package io.github.delayqueue.store;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.PartialStats.PartitionFailure;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How a topic's stats are collected partition by partition while some do not answer, and
 * how a failure reads as text.
 */
class PartialStatsTests {

	private static final TopicStats TWO_SCHEDULED = new TopicStats(1_000, 2, 0, 0, 0, 5_000, -1);

	private static final TopicStats THREE_SCHEDULED = new TopicStats(1_000, 3, 0, 0, 0, 4_000, -1);

	@Test
	void thePartitionsThatAnswerAreAddedUpAndTheOthersNamedWithTheirServer() {
		Map<String, CompletableFuture<TopicStats>> reads = new LinkedHashMap<>();
		reads.put("orders", CompletableFuture.completedFuture(TWO_SCHEDULED));
		reads.put("orders#2", CompletableFuture.failedFuture(new QueryTimeoutException("Redis did not answer")));
		reads.put("orders#5", CompletableFuture.completedFuture(THREE_SCHEDULED));
		CompletableFuture<TopicStats> pending = new CompletableFuture<>();
		reads.put("orders#7", pending);
		PartialStats stats = PartialStats.await(new Inspector(), reads,
				System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50), Duration.ofSeconds(2));
		assertThat(stats.stats()).isNotNull();
		assertThat(stats.stats().scheduled()).isEqualTo(5);
		assertThat(stats.stats().nextDueMillis()).isEqualTo(4_000);
		assertThat(stats.complete()).isFalse();
		assertThat(stats.unreachable()).containsOnlyKeys("orders#2", "orders#7");
		assertThat(stats.unreachable().get("orders#2").describe())
			.isEqualTo("Redis did not answer (primary 10.0.0.7:6379)");
		assertThat(stats.unreachable().get("orders#7"))
			.isEqualTo(new PartitionFailure("orders#7", "10.0.0.7:6379", "Redis did not answer within 2s"));
		assertThat(pending).isCancelled();
	}

	@Test
	void noStatsWhenNoPartitionAnswers() {
		PartialStats stats = PartialStats.await(new Inspector(),
				Map.of("payments", CompletableFuture.failedFuture(new QueryTimeoutException("Redis did not answer"))),
				System.nanoTime(), Duration.ofSeconds(1));
		assertThat(stats.stats()).isNull();
		assertThat(stats.unreachable()).containsOnlyKeys("payments");
	}

	@Test
	void aPartitionCountThatDiffersIsNoOutageAndIsThrown() {
		PartitionCountException stale = PartitionCountException.differs("orders", 2, 3);
		assertThatExceptionOfType(PartitionCountException.class)
			.isThrownBy(() -> PartialStats.await(new Inspector(),
					Map.of("orders", CompletableFuture.failedFuture(stale)), System.nanoTime(), Duration.ofSeconds(1)))
			.isSameAs(stale);
	}

	@Test
	void aFailureReadsAsItsMessageWithRedisReplyAndNeverAsNull() {
		RedisSystemException wrongType = new RedisSystemException("Error in execution",
				new IllegalStateException("WRONGTYPE Operation against a key holding the wrong kind of value"));
		assertThat(Failures.describe(wrongType))
			.isEqualTo("Error in execution: WRONGTYPE Operation against a key holding the wrong kind of value");
		assertThat(Failures.describe(new CompletionException(wrongType))).startsWith("Error in execution: WRONGTYPE");
		assertThat(Failures.describe(new QueryTimeoutException("Redis did not answer within 1s")))
			.isEqualTo("Redis did not answer within 1s");
		assertThat(Failures.describe(new IllegalStateException((String) null))).isEqualTo("IllegalStateException");
		assertThat(Failures.describe(new IllegalStateException(null, new IllegalArgumentException("bad"))))
			.isEqualTo("bad");
		assertThat(Failures.describe(new QueryTimeoutException("null", new IllegalStateException((String) null))))
			.isEqualTo("IllegalStateException");
		assertThat(Failures.describe(null)).isEqualTo("unknown failure");
	}

	private static final class Inspector implements TopicInspector {

		@Override
		public String topic() {
			return "orders";
		}

		@Override
		public TopicStats stats() {
			throw new UnsupportedOperationException();
		}

		@Override
		public MessagePage page(MessageState state, long offset, int limit) {
			throw new UnsupportedOperationException();
		}

		@Override
		public @Nullable MessageSnapshot inspect(String id, int maxBytes) {
			throw new UnsupportedOperationException();
		}

		@Override
		public String serverOf(String partition) {
			return "10.0.0.7:6379";
		}

	}

}
