package io.github.delayqueue.actuate;

import io.github.delayqueue.actuate.DelayQueueEndpoint.ActionResult;
import io.github.delayqueue.actuate.EndpointActions.TopicRequest;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.ScheduleInfo;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

/**
 * The endpoint's actions on a topic's recurring schedule, named by the request:
 * {@code pause-schedule}, {@code resume-schedule} and {@code trigger-schedule} (one
 * message now). They go through the application's {@link DelayQueueSchedules}, whose
 * changes wake this application's schedule poller up.
 */
final class ScheduleActions {

	private final DelayQueueSchedules schedules;

	/**
	 * Creates the actions.
	 * @param schedules the application's schedules
	 */
	ScheduleActions(DelayQueueSchedules schedules) {
		this.schedules = schedules;
	}

	/**
	 * {@code pause-schedule}: no tick is sent until it is resumed.
	 * @param request the topic and the schedule's name
	 * @return what was done
	 */
	ActionResult pause(TopicRequest request) {
		String name = find(request, "pause-schedule").schedule().name();
		boolean paused = this.schedules.pause(name);
		return new ActionResult(request.topic(), name, "pause-schedule", paused ? 1 : 0,
				paused ? "schedule paused" : "schedule was paused already");
	}

	/**
	 * {@code resume-schedule}: its next tick is the first after now.
	 * @param request the topic and the schedule's name
	 * @return what was done
	 */
	ActionResult resume(TopicRequest request) {
		String name = find(request, "resume-schedule").schedule().name();
		boolean resumed = this.schedules.resume(name);
		return new ActionResult(request.topic(), name, "resume-schedule", resumed ? 1 : 0,
				resumed ? "schedule resumed" : "schedule was not paused");
	}

	/**
	 * {@code trigger-schedule}: sends one message now, with the schedule's topic and
	 * payload.
	 * @param request the topic and the schedule's name
	 * @return what was done
	 */
	ActionResult trigger(TopicRequest request) {
		String name = find(request, "trigger-schedule").schedule().name();
		SendResult sent = this.schedules.trigger(name);
		return new ActionResult(request.topic(), name, "trigger-schedule", sent.duplicate() ? 0 : 1,
				sent.duplicate() ? "a message of that tick exists already" : "message " + sent.id() + " sent");
	}

	private ScheduleInfo find(TopicRequest request, String action) {
		String topic = request.topic();
		String name = request.schedule();
		if (name == null || name.isBlank()) {
			throw new InvalidEndpointRequestException(action + " needs the schedule's name, as 'schedule'",
					"Missing schedule");
		}
		return this.schedules.get(name)
			.filter((found) -> found.schedule().topic().equals(topic))
			.orElseThrow(() -> new InvalidEndpointRequestException(
					"Topic '" + topic + "' has no schedule named '" + name + "'", "Unknown schedule"));
	}

}
