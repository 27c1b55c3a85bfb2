package io.github.delayqueue.actuate;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.autoconfigure.DelayQueueActuatorAutoConfiguration;
import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The endpoint's actions by name ({@link EndpointActions}): a name in any case, and an
 * unknown one refused naming the known ones.
 */
class EndpointActionsTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
		.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=delayqueue");

	@Test
	void anUnknownTopicActionIsRefusedNamingEveryTopicAction() {
		this.runner.run((context) -> assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> context.getBean(DelayQueueEndpoint.class)
				.topicAction("reports", "explode", null, null, null, null))
			.withMessage("Unknown topic action 'explode': use pause, resume, replay-dead, purge-dead, pause-schedule,"
					+ " resume-schedule, trigger-schedule, pause-group or resume-group"));
	}

	@Test
	void anUnknownMessageActionIsRefusedNamingEveryMessageAction() {
		this.runner.run((context) -> assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> context.getBean(DelayQueueEndpoint.class).messageAction("reports", "m1", "explode", null))
			.withMessage("Unknown message action 'explode': use reschedule, cancel, replay or purge"));
	}

	@Test
	void anActionIsNamedInAnyCaseAndAnsweredInLowerCase() {
		this.runner.run((context) -> {
			context.getBean(DelayQueueSchedules.class)
				.save(Schedule.fixedRate("hourly", "reports", Duration.ofHours(1)));
			DelayQueueEndpoint.ActionResult result = context.getBean(DelayQueueEndpoint.class)
				.topicAction("reports", "Pause-Schedule", null, "hourly", null, null);
			assertThat(result.action()).isEqualTo("pause-schedule");
			assertThat(result.affected()).isOne();
			assertThat(context.getBean(DelayQueueSchedules.class).get("hourly").orElseThrow().paused()).isTrue();
		});
	}

	@Test
	void aGroupIsPausedForAWhileAndResumedThroughTheEndpointInRedis() {
		this.runner.run((context) -> {
			DelayQueueEndpoint endpoint = context.getBean(DelayQueueEndpoint.class);
			DelayQueueEndpoint.ActionResult paused = endpoint.topicAction("reports", "pause-group", null, null,
					"shop-17", Duration.ofMinutes(10));
			assertThat(paused.id()).isEqualTo("shop-17");
			assertThat(paused.detail()).startsWith("group paused until ");
			DelayQueueGroups groups = context.getBean(DelayQueueGroups.class);
			assertThat(groups.group("reports", "shop-17").pausedUntil()).isAfter(Instant.now().plusSeconds(500));
			DelayQueueEndpoint.TopicDescriptor topic = (DelayQueueEndpoint.TopicDescriptor) endpoint
				.readTopic("reports", null, null, null, null)
				.getBody();
			assertThat(topic.pausedGroups()).isOne();
			assertThat(topic.firstPausesToEnd()).containsOnlyKeys("shop-17");
			DelayQueueEndpoint.ActionResult resumed = endpoint.topicAction("reports", "resume-group", null, null,
					"shop-17", null);
			assertThat(resumed.affected()).isOne();
			assertThat(groups.group("reports", "shop-17").paused()).isFalse();
			assertThat(endpoint.topicAction("reports", "resume-group", null, null, "shop-17", null).detail())
				.isEqualTo("group was not paused");
		});
	}

	@Test
	void aGroupActionWithoutAGroupOrWithAnInvalidLengthIsRefusedNamingTheProblem() {
		this.runner.run((context) -> {
			DelayQueueEndpoint endpoint = context.getBean(DelayQueueEndpoint.class);
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.topicAction("reports", "pause-group", null, null, null, null))
				.withMessage("pause-group needs the group's name, as 'group'");
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.topicAction("reports", "pause-group", null, null, "g", Duration.ZERO))
				.withMessageContaining("must last 1 ms to 3650 days");
		});
	}

	@Test
	void anInvalidTopicIsRefusedBeforeTheActionIsLookedUp() {
		this.runner.run((context) -> assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(
					() -> context.getBean(DelayQueueEndpoint.class).topicAction("", "explode", null, null, null, null))
			.withMessageNotContaining("Unknown topic action"));
	}

}
