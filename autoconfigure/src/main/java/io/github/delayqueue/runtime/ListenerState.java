package io.github.delayqueue.runtime;

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
	STOPPED

}
