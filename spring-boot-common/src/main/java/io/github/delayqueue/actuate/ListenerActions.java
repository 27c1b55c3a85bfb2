package io.github.delayqueue.actuate;

import java.util.function.BooleanSupplier;

import io.github.delayqueue.actuate.DelayQueueEndpoint.ActionResult;
import io.github.delayqueue.actuate.EndpointActions.TopicRequest;
import io.github.delayqueue.runtime.DelayQueueRuntime;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

/**
 * The endpoint's {@code pause} and {@code resume} of a topic's listener in this
 * application; 400 when the topic has no listener here.
 */
final class ListenerActions {

	private final DelayQueueRuntime runtime;

	/**
	 * Creates the actions.
	 * @param runtime the listeners of this application
	 */
	ListenerActions(DelayQueueRuntime runtime) {
		this.runtime = runtime;
	}

	/**
	 * Pauses the topic's listener.
	 * @param request the topic
	 * @return what was done
	 */
	ActionResult pause(TopicRequest request) {
		String topic = request.topic();
		boolean paused = listenerCall(() -> this.runtime.pause(topic));
		return new ActionResult(topic, null, "pause", paused ? 1 : 0,
				paused ? "listener paused in this application" : "listener was paused already");
	}

	/**
	 * Resumes the topic's listener.
	 * @param request the topic
	 * @return what was done
	 */
	ActionResult resume(TopicRequest request) {
		String topic = request.topic();
		boolean resumed = listenerCall(() -> this.runtime.resume(topic));
		return new ActionResult(topic, null, "resume", resumed ? 1 : 0,
				resumed ? "listener resumed in this application" : "listener was not paused");
	}

	private static boolean listenerCall(BooleanSupplier call) {
		try {
			return call.getAsBoolean();
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "No listener");
		}
	}

}
