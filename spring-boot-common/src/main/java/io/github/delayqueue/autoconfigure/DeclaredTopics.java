package io.github.delayqueue.autoconfigure;

import java.util.Set;
import java.util.TreeSet;

/**
 * The topics an application's properties name, listened to here or not: those configured
 * under {@code delay-queue.topics}, those its {@code delay-queue.schedules} send to, and
 * those listed in {@code delay-queue.metrics.topics}. Their gauges are published and
 * their health is checked besides those of the topics listened to, so that a topic nobody
 * consumes is watched too.
 */
public final class DeclaredTopics {

	private DeclaredTopics() {
	}

	/**
	 * The topics the properties name.
	 * @param properties the properties
	 * @return the topics, sorted
	 */
	public static Set<String> of(DelayQueueProperties properties) {
		Set<String> topics = new TreeSet<>(properties.getTopics().keySet());
		properties.getSchedules().values().forEach((schedule) -> {
			String topic = schedule.getTopic();
			if (topic != null) {
				topics.add(topic);
			}
		});
		topics.addAll(properties.getMetrics().getTopics());
		return topics;
	}

}
