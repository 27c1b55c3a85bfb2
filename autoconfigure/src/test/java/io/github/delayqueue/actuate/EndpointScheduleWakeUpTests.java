package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.autoconfigure.DelayQueueActuatorAutoConfiguration;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.schedule.SlowSchedulePoller;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The endpoint changes schedules through the application's {@link DelayQueueSchedules},
 * which wakes this application's schedule poller up: the first tick of a schedule resumed
 * or saved here is delivered within seconds, while the poller's next regular look is
 * {@link SlowSchedulePoller#INTERVAL minutes} away.
 */
class EndpointScheduleWakeUpTests {

	private static final Duration EVERY_300_MS = Duration.ofMillis(300);

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
		.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
		.withUserConfiguration(SlowPollerConfig.class, Beats.class)
		.withPropertyValues("management.endpoints.web.exposure.include=delayqueue");

	@Test
	void aScheduleResumedThroughTheEndpointTicksWithoutWaitingForThePollersNextLook() {
		this.runner.run((context) -> {
			SlowSchedulePoller poller = context.getBean(SlowSchedulePoller.class);
			await().until(() -> poller.looks() > 0);
			// Saved and paused behind the poller's back (not through the application's
			// bean), while it waits for its next look.
			DelayQueueSchedules elsewhere = new DelayQueueSchedules(context.getBean(MessageStore.class).schedules(),
					context.getBean(DelayQueueTemplate.class));
			elsewhere.save(Schedule.fixedRate("heartbeat", "beats", EVERY_300_MS).withPayload("beat"));
			elsewhere.pause("heartbeat");
			List<String> ticks = context.getBean(Beats.class).ticks;
			assertThat(ticks).isEmpty();
			DelayQueueEndpoint endpoint = context.getBean(DelayQueueEndpoint.class);
			assertThat(endpoint.topicAction("beats", "resume-schedule", null, "heartbeat", null, null).affected())
				.isOne();
			await().until(() -> !ticks.isEmpty());
			assertThat(ticks).allMatch((id) -> id.startsWith("heartbeat~"));
		});
	}

	@Test
	void aScheduleSavedThroughTheApplicationsBeanTicksWithoutWaitingForThePollersNextLook() {
		this.runner.run((context) -> {
			SlowSchedulePoller poller = context.getBean(SlowSchedulePoller.class);
			await().until(() -> poller.looks() > 0);
			context.getBean(DelayQueueSchedules.class)
				.save(Schedule.fixedRate("heartbeat", "beats", EVERY_300_MS).withPayload("beat"));
			List<String> ticks = context.getBean(Beats.class).ticks;
			await().until(() -> !ticks.isEmpty());
			assertThat(ticks).allMatch((id) -> id.startsWith("heartbeat~"));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class SlowPollerConfig {

		@Bean
		SlowSchedulePoller slowSchedulePoller(MessageStore store) {
			return new SlowSchedulePoller(store);
		}

	}

	static class Beats {

		final List<String> ticks = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "beats")
		void on(Delivery<String> delivery) {
			this.ticks.add(delivery.id());
		}

	}

}
