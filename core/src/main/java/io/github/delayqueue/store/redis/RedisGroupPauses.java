package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicPartitions;

import org.jspecify.annotations.Nullable;

/**
 * Pauses and resumes groups of a topic, each in one script on the topic itself: groups
 * live on a topic of one partition (a grouped send to a partitioned one is refused).
 */
final class RedisGroupPauses {

	private final ScriptCalls calls;

	private final PartitionRouter router;

	RedisGroupPauses(ScriptCalls calls, PartitionRouter router) {
		this.calls = calls;
		this.router = router;
	}

	/**
	 * Pauses one group.
	 * @param topic the topic
	 * @param group the group's name
	 * @param length how long the pause lasts, {@code null} until it is resumed
	 * @return when the pause ends, on the Redis clock, or {@code null} when it lasts
	 * until it is resumed
	 */
	@Nullable Instant pause(String topic, String group, @Nullable Duration length) {
		NewMessage.checkGroup(group);
		this.router.agree(TopicPartitions.topicOf(topic), false, this.calls.deadline());
		return this.calls.run(topic, new ScriptCodecs.PauseGroup(group, length)).until();
	}

	/**
	 * Ends the pause of one group; its ready messages are claimed again at once.
	 * @param topic the topic
	 * @param group the group's name
	 * @return {@code true} if it was paused
	 */
	boolean resume(String topic, String group) {
		NewMessage.checkGroup(group);
		this.router.agree(TopicPartitions.topicOf(topic), false, this.calls.deadline());
		return this.calls.run(topic, new ScriptCodecs.ResumeGroup(this.calls.signalChannel(topic), topic, group));
	}

}
