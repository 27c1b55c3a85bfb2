package io.github.delayqueue.testsupport;

/**
 * Finds the threads of running listener containers, for tests that make one die.
 */
public final class ListenerThreads {

	private ListenerThreads() {
	}

	/**
	 * The live fetch thread of a topic's listener container.
	 * @param topic the topic
	 * @return the thread
	 */
	public static Thread fetchThread(String topic) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().equals("delay-queue-" + topic + "-fetch") && thread.isAlive())
			.findFirst()
			.orElseThrow();
	}

}
