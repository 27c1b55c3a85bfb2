package io.github.delayqueue.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link Deliveries} counts: lost, duplicated and early messages, and lateness
 * percentiles.
 */
class DeliveriesTests {

	@Test
	void countsLostDuplicatedAndEarlyMessages() {
		Deliveries deliveries = new Deliveries(4);
		long past = System.currentTimeMillis() - 1000;
		long future = System.currentTimeMillis() + 60_000;
		deliveries.handle(Payloads.of(0, past));
		deliveries.handle(Payloads.of(0, past));
		deliveries.handle(Payloads.of(1, future));
		deliveries.handle(Payloads.of(2, past));
		assertThat(deliveries.distinct()).isEqualTo(3);
		assertThat(deliveries.lost()).isEqualTo(1);
		assertThat(deliveries.duplicates()).isEqualTo(1);
		assertThat(deliveries.early()).isEqualTo(1);
		assertThat(deliveries.complete()).isFalse();
	}

	@Test
	void latenessPercentilesAreTakenOverTheDeliveredMessages() {
		Deliveries deliveries = new Deliveries(100);
		long now = System.currentTimeMillis();
		for (int i = 0; i < 100; i++) {
			deliveries.handle(Payloads.of(i, now - 10_000 - 100 * i));
		}
		assertThat(deliveries.latenessMillis(50)).isBetween(14_900.0, 16_000.0);
		assertThat(deliveries.latenessMillis(100)).isBetween(19_900.0, 21_000.0);
		assertThat(deliveries.latenessMillis(100)).isGreaterThan(deliveries.latenessMillis(99));
	}

	@Test
	void payloadsHaveAFixedSizeAndCarryTheirSequenceAndDueTime() {
		String payload = Payloads.of(42, 1_700_000_000_123L);
		assertThat(payload).hasSize(Payloads.SIZE);
		assertThat(Payloads.sequence(payload)).isEqualTo(42);
		assertThat(Payloads.dueAtMillis(payload)).isEqualTo(1_700_000_000_123L);
	}

}
