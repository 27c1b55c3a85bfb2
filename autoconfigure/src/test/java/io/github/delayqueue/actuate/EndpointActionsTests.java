package io.github.delayqueue.actuate;

import java.time.Duration;

import io.github.delayqueue.autoconfigure.DelayQueueActuatorAutoConfiguration;
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
			.isThrownBy(() -> context.getBean(DelayQueueEndpoint.class).topicAction("reports", "explode", null, null))
			.withMessage("Unknown topic action 'explode': use pause, resume, replay-dead, purge-dead, pause-schedule,"
					+ " resume-schedule or trigger-schedule"));
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
				.topicAction("reports", "Pause-Schedule", null, "hourly");
			assertThat(result.action()).isEqualTo("pause-schedule");
			assertThat(result.affected()).isOne();
			assertThat(context.getBean(DelayQueueSchedules.class).get("hourly").orElseThrow().paused()).isTrue();
		});
	}

	@Test
	void anInvalidTopicIsRefusedBeforeTheActionIsLookedUp() {
		this.runner.run((context) -> assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> context.getBean(DelayQueueEndpoint.class).topicAction("", "explode", null, null))
			.withMessageNotContaining("Unknown topic action"));
	}

}
