package io.github.delayqueue.actuate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.delayqueue.actuate.DelayQueueEndpoint.ActionResult;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

/**
 * The actions of one kind that the {@code delayqueue} endpoint runs, by name: a name is
 * matched ignoring case, and an unknown one is answered with 400 naming the known ones.
 *
 * @param <R> the request the actions take
 */
final class NamedActions<R> {

	private final String kind;

	private final Map<String, Action<R>> actions = new LinkedHashMap<>();

	/**
	 * Creates actions without any.
	 * @param kind what they act on, for the error about an unknown one, such as
	 * {@code topic}
	 */
	NamedActions(String kind) {
		this.kind = kind;
	}

	/**
	 * Adds an action.
	 * @param name its name, in lower case
	 * @param action the action
	 * @return these actions
	 */
	NamedActions<R> with(String name, Action<R> action) {
		this.actions.put(name, action);
		return this;
	}

	/**
	 * Runs the action of a name.
	 * @param name the name, in any case
	 * @param request the request
	 * @return what was done
	 * @throws InvalidEndpointRequestException if no action has that name
	 */
	ActionResult run(String name, R request) {
		Action<R> action = this.actions.get(name.toLowerCase(Locale.ROOT));
		if (action == null) {
			throw new InvalidEndpointRequestException("Unknown " + this.kind + " action '" + name + "': use " + known(),
					"Unknown action");
		}
		return action.run(request);
	}

	private String known() {
		List<String> names = new ArrayList<>(this.actions.keySet());
		String last = names.remove(names.size() - 1);
		return names.isEmpty() ? last : String.join(", ", names) + " or " + last;
	}

	/**
	 * One action of the endpoint.
	 *
	 * @param <R> the request it takes
	 */
	@FunctionalInterface
	interface Action<R> {

		/**
		 * Runs the action.
		 * @param request the request
		 * @return what was done
		 */
		ActionResult run(R request);

	}

}
