package io.github.delayqueue.test;

import java.time.Duration;

import io.github.delayqueue.store.TopicStats;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 10,000 ticks of a schedule in one {@code advance}, each a step of its own, within the
 * clock's timeout per step (the whole walk takes longer). The topic has no listener here,
 * so that the walk's own cost is measured, not deliveries.
 */
@SpringBootTest(properties = { "delay-queue.schedules.beat.topic=unheard", "delay-queue.schedules.beat.fixed-rate=1s" })
@EmbeddedDelayQueue(timeout = "2s")
class TenThousandScheduleStepsTests {

	@Autowired
	private DelayQueueTestClock clock;

	@Test
	void tenThousandScheduleStepsRunInOneAdvance() {
		// The ticks the poller sent in the real time before the advance (as many as the
		// seconds the context took to start) are counted apart.
		TopicStats before = this.clock.store().inspector("unheard").stats();
		long started = System.nanoTime();
		this.clock.advance(Duration.ofSeconds(10_000));
		Duration took = Duration.ofNanos(System.nanoTime() - started);
		TopicStats stats = this.clock.store().inspector("unheard").stats();
		// The ticks of the span: its last one may fall a moment after its end, by where
		// the first tick fell, and one may be on its way when the span starts.
		assertThat(stats.scheduled() + stats.ready() - before.scheduled() - before.ready()).isBetween(9_998L, 10_001L);
		assertThat(took).isGreaterThan(this.clock.timeout());
		System.out.println("10,000 schedule steps took " + took);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class NoListener {

	}

}
