package io.github.delayqueue.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

import io.github.delayqueue.actuate.DelayQueueEndpoint.ActionResult;
import io.github.delayqueue.actuate.EndpointActions.TopicRequest;
import io.github.delayqueue.group.DelayQueueGroups;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

/**
 * The endpoint's actions on one group of a topic, named by the request:
 * {@code pause-group} (for {@code duration} when given, else until resumed) and
 * {@code resume-group}. They act in Redis, for every application of the topic.
 */
final class GroupActions {

	private final DelayQueueGroups groups;

	/**
	 * Creates the actions.
	 * @param groups the groups' operations
	 */
	GroupActions(DelayQueueGroups groups) {
		this.groups = groups;
	}

	/**
	 * {@code pause-group}: claims pass the group's ready messages over until the pause
	 * ends or the group is resumed.
	 * @param request the topic, the group and, optionally, how long
	 * @return what was done
	 */
	ActionResult pause(TopicRequest request) {
		String group = groupOf(request, "pause-group");
		Duration duration = request.duration();
		return refusingInvalid(() -> {
			if (duration == null) {
				this.groups.pause(request.topic(), group);
				return new ActionResult(request.topic(), group, "pause-group", 1, "group paused until resumed");
			}
			Instant until = this.groups.pause(request.topic(), group, duration);
			return new ActionResult(request.topic(), group, "pause-group", 1, "group paused until " + until);
		});
	}

	/**
	 * {@code resume-group}: the group's ready messages are claimed again at once.
	 * @param request the topic and the group
	 * @return what was done
	 */
	ActionResult resume(TopicRequest request) {
		String group = groupOf(request, "resume-group");
		boolean resumed = refusingInvalid(() -> this.groups.resume(request.topic(), group));
		return new ActionResult(request.topic(), group, "resume-group", resumed ? 1 : 0,
				resumed ? "group resumed" : "group was not paused");
	}

	/**
	 * Runs an action, answering 400 with the reason for an invalid group name or length
	 * and for a topic whose groups cannot be paused.
	 */
	private static <T> T refusingInvalid(Supplier<T> action) {
		try {
			return action.get();
		}
		catch (IllegalArgumentException | UnsupportedOperationException ex) {
			throw new InvalidEndpointRequestException(String.valueOf(ex.getMessage()), "Invalid group action");
		}
	}

	private static String groupOf(TopicRequest request, String action) {
		String group = request.group();
		if (group == null || group.isEmpty()) {
			throw new InvalidEndpointRequestException(action + " needs the group's name, as 'group'", "Missing group");
		}
		return group;
	}

}
