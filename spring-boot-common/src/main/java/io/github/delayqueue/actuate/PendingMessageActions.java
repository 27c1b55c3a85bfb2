package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import io.github.delayqueue.actuate.DelayQueueEndpoint.ActionResult;
import io.github.delayqueue.actuate.EndpointActions.MessageRequest;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.InvalidMessageException;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

/**
 * The endpoint's actions on a pending (scheduled or ready) message, through the template:
 * {@code reschedule} it with a new delay from now, or {@code cancel} it.
 */
final class PendingMessageActions {

	private final DelayQueueTemplate template;

	/**
	 * Creates the actions.
	 * @param template the template
	 */
	PendingMessageActions(DelayQueueTemplate template) {
		this.template = template;
	}

	/**
	 * {@code reschedule}: gives the message a new delay from now.
	 * @param request the message and its delay
	 * @return what was done
	 */
	ActionResult reschedule(MessageRequest request) {
		Duration delay = request.delay();
		if (delay == null) {
			throw new InvalidEndpointRequestException("reschedule needs a delay, e.g. \"10m\" or \"PT10M\"",
					"Missing delay");
		}
		boolean rescheduled = templateCall(() -> this.template.reschedule(request.topic(), request.id(), delay));
		return new ActionResult(request.topic(), request.id(), "reschedule", rescheduled ? 1 : 0,
				rescheduled ? "due in " + delay : "not pending (unknown, in flight, dead or handled): unchanged");
	}

	/**
	 * {@code cancel}: deletes the message.
	 * @param request the message
	 * @return what was done
	 */
	ActionResult cancel(MessageRequest request) {
		boolean cancelled = templateCall(() -> this.template.cancel(request.topic(), request.id()));
		return new ActionResult(request.topic(), request.id(), "cancel", cancelled ? 1 : 0,
				cancelled ? "cancelled" : "not pending (unknown, in flight, dead or handled): unchanged");
	}

	private static boolean templateCall(BooleanSupplier call) {
		try {
			return call.getAsBoolean();
		}
		catch (InvalidMessageException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid request");
		}
	}

}
