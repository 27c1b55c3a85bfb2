package io.github.delayqueue.listener;

/**
 * Supplies the configured settings of a topic's listener, before the annotation's own
 * values are applied.
 */
@FunctionalInterface
public interface ListenerSettingsProvider {

	/**
	 * The configured settings of a topic.
	 * @param topic the topic
	 * @return its settings
	 */
	ListenerSettings forTopic(String topic);

}
