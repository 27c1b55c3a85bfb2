package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The warning about a dead set that grows fast ({@link DeadSets}), on a clock of its own:
 * more than 1,000 dead letters of a topic within a minute, at most once per 10 minutes
 * and topic.
 */
class DeadSetsTests {

	private final AtomicLong nanos = new AtomicLong();

	private final DeadSets deadSets = new DeadSets(this.nanos::get);

	@Test
	void moreThanAThousandDeadLettersOfATopicWithinAMinuteWarnOnceInTenMinutes() {
		assertThat(this.deadSets.buried("orders", 1000)).isFalse();
		assertThat(this.deadSets.buried("orders#2", 1)).as("partitions count for their topic").isTrue();
		advance(Duration.ofSeconds(30));
		assertThat(this.deadSets.buried("orders", 500)).as("said already").isFalse();
		advance(Duration.ofMinutes(10));
		assertThat(this.deadSets.buried("orders", 1001)).isTrue();
	}

	@Test
	void aThousandSpreadOverMoreThanAMinuteDoNotWarn() {
		assertThat(this.deadSets.buried("orders", 600)).isFalse();
		advance(Duration.ofSeconds(61));
		assertThat(this.deadSets.buried("orders", 600)).isFalse();
		assertThat(this.deadSets.buried("orders#2#dead", 1001)).as("a dead-letter queue counts on its own").isTrue();
		assertThat(this.deadSets.buried("payments", 1001)).as("each topic counts on its own").isTrue();
	}

	private void advance(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
	}

}
