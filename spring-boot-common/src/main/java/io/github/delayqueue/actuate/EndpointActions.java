package io.github.delayqueue.actuate;

import java.time.Duration;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.actuate.DelayQueueEndpoint.ActionResult;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.MessageStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The write operations of the {@code delayqueue} endpoint: the actions on a topic and on
 * one message, by name. Each checks the topic first, answers 400 when this application
 * spreads it over another number of partitions than Redis does, and is logged once done.
 */
final class EndpointActions {

	private static final Log logger = LogFactory.getLog(DelayQueueEndpoint.class);

	private final NamedActions<TopicRequest> topicActions;

	private final NamedActions<MessageRequest> messageActions;

	/**
	 * Creates the actions.
	 * @param store the Redis store, for the dead letters
	 * @param template the template, for cancel and reschedule
	 * @param runtime the listeners of this application
	 * @param schedules the application's schedules
	 */
	EndpointActions(MessageStore store, DelayQueueTemplate template, DelayQueueRuntime runtime,
			DelayQueueSchedules schedules) {
		ListenerActions listeners = new ListenerActions(runtime);
		DeadLetterActions deadLetters = new DeadLetterActions(store);
		ScheduleActions scheduleActions = new ScheduleActions(schedules);
		PendingMessageActions pending = new PendingMessageActions(template);
		GroupActions groups = new GroupActions(new DelayQueueGroups(store));
		this.topicActions = new NamedActions<TopicRequest>("topic").with("pause", listeners::pause)
			.with("resume", listeners::resume)
			.with("replay-dead", deadLetters::replayAll)
			.with("purge-dead", deadLetters::purgeAll)
			.with("pause-schedule", scheduleActions::pause)
			.with("resume-schedule", scheduleActions::resume)
			.with("trigger-schedule", scheduleActions::trigger)
			.with("pause-group", groups::pause)
			.with("resume-group", groups::resume);
		this.messageActions = new NamedActions<MessageRequest>("message").with("reschedule", pending::reschedule)
			.with("cancel", pending::cancel)
			.with("replay", deadLetters::replay)
			.with("purge", deadLetters::purge);
	}

	/**
	 * Runs an action on a topic.
	 * @param action the action's name
	 * @param request the topic and the action's parameters
	 * @return what was done
	 */
	ActionResult onTopic(String action, TopicRequest request) {
		return EndpointErrors.refusingStaleCounts(() -> {
			EndpointErrors.requireTopic(request.topic());
			return logged(this.topicActions.run(action, request));
		});
	}

	/**
	 * Runs an action on one message.
	 * @param action the action's name
	 * @param request the message and the action's parameters
	 * @return what was done
	 */
	ActionResult onMessage(String action, MessageRequest request) {
		return EndpointErrors.refusingStaleCounts(() -> {
			EndpointErrors.requireTopic(request.topic());
			return logged(this.messageActions.run(action, request));
		});
	}

	private static ActionResult logged(ActionResult result) {
		logger.info("delayqueue endpoint: " + result);
		return result;
	}

	/**
	 * An action on a topic.
	 *
	 * @param topic the topic
	 * @param limit for the dead-letter actions: the most dead letters to act on
	 * @param schedule for the schedule actions: the schedule's name
	 * @param group for the group actions: the group's name
	 * @param duration for {@code pause-group}: how long, until resumed when absent
	 */
	record TopicRequest(String topic, @Nullable Long limit, @Nullable String schedule, @Nullable String group,
			@Nullable Duration duration) {
	}

	/**
	 * An action on one message.
	 *
	 * @param topic the topic
	 * @param id the message id
	 * @param delay for {@code reschedule}: the new delay from now
	 */
	record MessageRequest(String topic, String id, @Nullable Duration delay) {
	}

}
