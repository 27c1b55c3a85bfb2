package io.github.delayqueue.runtime;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.store.WakeUpListener;

/**
 * Routes the store's wake-up signals to this application's brokers and listeners, by
 * partition. Signals only shorten waits: a lost signal delays a message by at most the
 * broker's maximum sleep or the listener's idle check interval, it never stalls a topic.
 */
final class WakeUpSignals implements WakeUpListener {

	private final Map<String, Runnable> brokers = new ConcurrentHashMap<>();

	private final Map<String, Runnable> listeners = new ConcurrentHashMap<>();

	/**
	 * Routes broker signals of a partition.
	 * @param partition the partition
	 * @param wake what to run on a signal
	 */
	void onEarlierMessage(String partition, Runnable wake) {
		this.brokers.put(partition, wake);
	}

	/**
	 * Routes ready signals of a partition.
	 * @param partition the partition
	 * @param wake what to run on a signal
	 */
	void onReadyMessages(String partition, Runnable wake) {
		this.listeners.put(partition, wake);
	}

	/** Forgets every route. */
	void clear() {
		this.brokers.clear();
		this.listeners.clear();
	}

	@Override
	public void earlierMessage(String partition) {
		run(this.brokers.get(partition));
	}

	@Override
	public void readyMessages(String partition) {
		run(this.listeners.get(partition));
	}

	private static void run(Runnable wake) {
		if (wake != null) {
			wake.run();
		}
	}

}
