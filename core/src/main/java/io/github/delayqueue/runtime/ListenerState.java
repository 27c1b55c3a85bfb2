package io.github.delayqueue.runtime;

import java.util.List;

/**
 * What a topic's listener is doing in this application.
 */
public enum ListenerState {

	/** Claiming and handling messages. */
	RUNNING,

	/**
	 * Paused by {@link DelayQueueRuntime#pause(String)}: claims nothing until resumed.
	 */
	PAUSED,

	/**
	 * Not claiming although not paused: the runtime is not started, or the listener
	 * stopped on an error.
	 */
	STOPPED;

	/**
	 * The state of a topic's listener from the states of its partitions' listeners.
	 * @param partitions the states of the partitions, at least one
	 * @return paused if one is paused, running if all are running, else stopped
	 */
	static ListenerState of(List<ListenerState> partitions) {
		if (partitions.contains(PAUSED)) {
			return PAUSED;
		}
		return partitions.stream().allMatch(RUNNING::equals) ? RUNNING : STOPPED;
	}

}
