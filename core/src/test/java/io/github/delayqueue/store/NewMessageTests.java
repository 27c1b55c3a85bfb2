package io.github.delayqueue.store;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Due times of new messages are whole milliseconds rounded up, so that no message is due
 * before the time it was sent for.
 */
class NewMessageTests {

	private static final byte[] BODY = new byte[0];

	@Test
	void delayWithAFractionOfAMillisecondIsRoundedUp() {
		assertThat(NewMessage.afterDelay("a", Duration.ofNanos(1), BODY).when()).isEqualTo(1);
		assertThat(NewMessage.afterDelay("a", Duration.ofNanos(1_500_000), BODY).when()).isEqualTo(2);
		assertThat(NewMessage.afterDelay("a", Duration.ofMillis(2), BODY).when()).isEqualTo(2);
		assertThat(NewMessage.afterDelay("a", Duration.ZERO, BODY).when()).isZero();
	}

	@Test
	void dueTimeWithAFractionOfAMillisecondIsRoundedUp() {
		Instant whole = Instant.ofEpochMilli(1_700_000_000_000L);
		assertThat(NewMessage.dueAt("a", whole, BODY).when()).isEqualTo(1_700_000_000_000L);
		assertThat(NewMessage.dueAt("a", whole.plusNanos(1), BODY).when()).isEqualTo(1_700_000_000_001L);
		assertThat(NewMessage.dueAt("a", Instant.EPOCH.minusNanos(1), BODY).when()).isZero();
	}

}
