package io.github.delayqueue.test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A recurring schedule on the test clock: its ticks come as the clock passes them, each
 * once, in milliseconds of test time.
 */
@SpringBootTest(properties = { "delay-queue.schedules.reminder.topic=reminders",
		"delay-queue.schedules.reminder.fixed-rate=30m", "delay-queue.schedules.reminder.payload=remind" })
@EmbeddedDelayQueue
class SchedulesOnTheTestClockTests {

	@Autowired
	private DelayQueueTestClock clock;

	@Autowired
	private Reminders reminders;

	@Test
	void aThirtyMinuteScheduleTicksTwiceInAnHourOfTestTime() {
		this.clock.advance(Duration.ofMinutes(29));
		assertThat(this.reminders.deliveries).isEmpty();
		this.clock.advance(Duration.ofMinutes(31));
		assertThat(this.reminders.deliveries).hasSize(2).allSatisfy((delivery) -> {
			assertThat(delivery.id()).startsWith("reminder~");
			assertThat(delivery.payload()).isEqualTo("remind");
		});
		assertThat(Duration.between(this.reminders.deliveries.get(0).dueAt(), this.reminders.deliveries.get(1).dueAt()))
			.isEqualTo(Duration.ofMinutes(30));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Reminders {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "reminders")
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
		}

	}

}
