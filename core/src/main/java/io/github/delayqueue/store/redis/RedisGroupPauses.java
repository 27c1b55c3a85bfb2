package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.NewMessage;

import org.jspecify.annotations.Nullable;

/**
 * Pauses and resumes groups of a topic, each in one script on the group's partition,
 * where its messages are.
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
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOfGroup(topic, group, deadline);
		return this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition,
						new ScriptCodecs.PauseGroup(group, this.router.countOf(partition),
								this.calls.signalChannel(partition), partition, length),
						PartitionCounts.remaining(deadline)))
			.until();
	}

	/**
	 * Ends the pause of one group; its ready messages are claimed again at once.
	 * @param topic the topic
	 * @param group the group's name
	 * @return {@code true} if it was paused
	 */
	boolean resume(String topic, String group) {
		NewMessage.checkGroup(group);
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOfGroup(topic, group, deadline);
		// One request, however often it is sent: a run of it after one that resumed the
		// group (its reply lost) reports that.
		String token = LeaseTokens.newToken();
		return this.router
			.settlingRefusal(topic, deadline,
					() -> this.calls.run(
							partition, new ScriptCodecs.ResumeGroup(this.calls.signalChannel(partition), partition,
									group, this.router.countOf(partition), token),
							PartitionCounts.remaining(deadline)));
	}

}
