package io.github.delayqueue.store;

/**
 * Receives the wake-up signals of a {@link MessageStore}. Signals only shorten waits: a
 * lost one delays a message by at most the broker's maximum sleep or the listener's idle
 * check interval, it never stalls a topic. Called where the signal arrives: must not
 * block.
 */
public interface WakeUpListener {

	/**
	 * A message became the earliest due of a partition: its broker should look again.
	 * @param partition the partition (for partition 0, the topic)
	 */
	void earlierMessage(String partition);

	/**
	 * Messages of a partition became ready: its listener should claim them.
	 * @param partition the partition (for partition 0, the topic)
	 */
	void readyMessages(String partition);

}
