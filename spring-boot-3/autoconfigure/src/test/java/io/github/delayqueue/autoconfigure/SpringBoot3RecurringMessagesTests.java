package io.github.delayqueue.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.MisfirePolicy;
import io.github.delayqueue.schedule.ScheduleInfo;
import io.github.delayqueue.schedule.ScheduleTrigger;
import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recurring messages on Spring Boot 3.5: schedules bound from the properties (a cron
 * expression with a zone and a misfire policy, a duration) send their ticks to a
 * listener.
 */
class SpringBoot3RecurringMessagesTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withPropertyValues(TestRedis.shared().springProperties())
		.withPropertyValues("delay-queue.key-prefix=boot3-" + UUID.randomUUID().toString().substring(0, 8));

	@Test
	void aScheduleFromThePropertiesSendsItsTicksToTheListener() {
		this.runner.withUserConfiguration(Beats.class)
			.withPropertyValues("delay-queue.schedules.beat.topic=beats", "delay-queue.schedules.beat.cron=* * * * * *",
					"delay-queue.schedules.beat.zone=Europe/Berlin", "delay-queue.schedules.beat.misfire=skip",
					"delay-queue.schedules.beat.payload=beat", "delay-queue.schedules.hourly.topic=beats",
					"delay-queue.schedules.hourly.fixed-rate=1h", "delay-queue.schedules.hourly.payload=hourly")
			.run((context) -> {
				Beats beats = context.getBean(Beats.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> beats.deliveries.size() >= 3);
				assertThat(beats.deliveries).allSatisfy((delivery) -> assertThat(delivery.payload()).isEqualTo("beat"));
				ScheduleInfo beat = context.getBean(DelayQueueSchedules.class).get("beat").orElseThrow();
				assertThat(beat.schedule().misfire()).isEqualTo(MisfirePolicy.SKIP);
				assertThat(beat.schedule().trigger())
					.isEqualTo(new ScheduleTrigger.Cron("* * * * * *", ZoneId.of("Europe/Berlin")));
				assertThat(context.getBean(DelayQueueSchedules.class).get("hourly").orElseThrow().schedule().trigger())
					.isEqualTo(new ScheduleTrigger.FixedRate(Duration.ofHours(1)));
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class Beats {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "beats")
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
		}

	}

}
