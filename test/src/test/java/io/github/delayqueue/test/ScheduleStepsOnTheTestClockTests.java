package io.github.delayqueue.test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.listener.DelayListener;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A schedule that ticks many times in one {@code advance}, each tick delivered: the
 * timeout bounds each step, not the whole walk, and a step that does not settle is named
 * with the steps done and the schedule.
 */
@SpringBootTest(properties = { "delay-queue.schedules.beat.topic=beats", "delay-queue.schedules.beat.fixed-rate=1s",
		"delay-queue.schedules.beat.payload=beat" })
@EmbeddedDelayQueue(timeout = "1s")
class ScheduleStepsOnTheTestClockTests {

	@Autowired
	private DelayQueueTestClock clock;

	@Autowired
	private Beats beats;

	@Test
	void anAdvanceWhoseStepsTakeLongerThanTheTimeoutTogetherSucceeds() {
		// Ticks left over from the context's start or another test are handled first.
		this.clock.advance(Duration.ZERO);
		this.beats.handled.set(0);
		long started = System.nanoTime();
		this.clock.advance(Duration.ofSeconds(300));
		assertThat(this.beats.handled).hasValue(300);
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(this.clock.timeout());
	}

	@Test
	void aStepThatDoesNotSettleIsNamedWithTheStepsDoneAndTheSchedule() {
		this.beats.handled.set(0);
		this.beats.blockAt = 3;
		try {
			assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.clock.advance(Duration.ofSeconds(10)))
				.withMessageContaining("did not settle within 1s")
				.withMessageMatching(
						"(?s).*in advance\\(10s\\) \\(each step has the whole timeout\\), in step [1-3] of about 1[0-2], \\d+ms into the span.*")
				.withMessageContaining("for the tick of schedule 'beat' (topic 'beats')")
				.withMessageContaining("listeners still hold messages");
		}
		finally {
			this.beats.blockAt = 0;
			this.beats.release.countDown();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Beats {

		final AtomicInteger handled = new AtomicInteger();

		final CountDownLatch release = new CountDownLatch(1);

		volatile int blockAt;

		@DelayListener(topic = "beats")
		void on(String beat) throws InterruptedException {
			if (this.handled.incrementAndGet() == this.blockAt) {
				this.release.await(30, TimeUnit.SECONDS);
			}
		}

	}

}
