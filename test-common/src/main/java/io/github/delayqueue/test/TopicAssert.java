package io.github.delayqueue.test;

import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import org.assertj.core.api.AbstractAssert;
import org.jspecify.annotations.Nullable;

/**
 * Assertions on what one topic holds, read from Redis at each call. Obtained from
 * {@link DelayQueueAssertions#assertThat(DelayQueueTestClock)}.
 */
public final class TopicAssert extends AbstractAssert<TopicAssert, TopicInspector> {

	/** Enough bytes of a message to read its header and a payload of any test's size. */
	private static final int MAX_BYTES = 1024 * 1024;

	/** The ready messages read a page at a time. */
	private static final int PAGE = 500;

	TopicAssert(TopicInspector topic) {
		super(topic, TopicAssert.class);
	}

	/**
	 * Verifies that a message waits for its due time.
	 * @param id the message id
	 * @return this
	 */
	public TopicAssert hasScheduled(String id) {
		return hasIn(id, MessageState.SCHEDULED);
	}

	/**
	 * Verifies that a message is due and waits for a listener.
	 * @param id the message id
	 * @return this
	 */
	public TopicAssert hasReady(String id) {
		return hasIn(id, MessageState.READY);
	}

	/**
	 * Verifies that a message is leased to a listener.
	 * @param id the message id
	 * @return this
	 */
	public TopicAssert hasInFlight(String id) {
		return hasIn(id, MessageState.IN_FLIGHT);
	}

	/**
	 * Verifies that a message is in the dead-letter set.
	 * @param id the message id
	 * @return this
	 */
	public TopicAssert hasDead(String id) {
		return hasIn(id, MessageState.DEAD);
	}

	/**
	 * Verifies that the topic holds no message of that id in any state: it was never
	 * sent, or was cancelled or delivered.
	 * @param id the message id
	 * @return this
	 */
	public TopicAssert doesNotHave(String id) {
		MessageSnapshot found = inspect(id);
		if (found != null) {
			failWithMessage("Expected topic '%s' to hold no message '%s', but it is %s", this.actual.topic(), id,
					describe(found.state()));
		}
		return this;
	}

	/**
	 * Verifies that the topic holds no message at all, dead ones included.
	 * @return this
	 */
	public TopicAssert isEmpty() {
		TopicStats stats = this.actual.stats();
		if (stats.scheduled() + stats.ready() + stats.inFlight() + stats.dead() != 0) {
			failWithMessage("Expected topic '%s' to be empty, but it has %s", this.actual.topic(), counts(stats));
		}
		return this;
	}

	/**
	 * Verifies how many messages wait for their due time.
	 * @param expected the expected number
	 * @return this
	 */
	public TopicAssert hasScheduledCount(long expected) {
		return hasCount("scheduled", this.actual.stats().scheduled(), expected);
	}

	/**
	 * Verifies how many messages are due and wait for a listener.
	 * @param expected the expected number
	 * @return this
	 */
	public TopicAssert hasReadyCount(long expected) {
		return hasCount("ready", this.actual.stats().ready(), expected);
	}

	/**
	 * Verifies that a group of the topic is paused (see {@code DelayQueueGroups}): claims
	 * pass its ready messages over.
	 * @param group the group
	 * @return this assertion
	 */
	public TopicAssert hasPausedGroup(String group) {
		isNotNull();
		GroupView view = this.actual.group(group);
		if (!view.paused()) {
			failWithMessage("Expected group '%s' of topic '%s' to be paused, but it is not (%d ready, %d in flight)",
					group, this.actual.topic(), view.ready(), view.inFlight());
		}
		return this;
	}

	/**
	 * Verifies that a group of the topic is not paused.
	 * @param group the group
	 * @return this assertion
	 */
	public TopicAssert doesNotHavePausedGroup(String group) {
		isNotNull();
		GroupView view = this.actual.group(group);
		if (view.paused()) {
			failWithMessage("Expected group '%s' of topic '%s' not to be paused, but it is, %s", group,
					this.actual.topic(),
					(view.pausedUntil() != null) ? "until " + view.pausedUntil() : "until it is resumed");
		}
		return this;
	}

	/**
	 * Verifies how many messages of a group are due and wait for a listener (read message
	 * by message: meant for a test's few thousand messages at most).
	 * @param group the group
	 * @param expected the expected number
	 * @return this
	 */
	public TopicAssert hasReadyCountInGroup(String group, long expected) {
		isNotNull();
		long count = 0;
		for (long offset = 0;; offset += PAGE) {
			MessagePage page = this.actual.page(MessageState.READY, offset, PAGE);
			for (MessageSummary summary : page.messages()) {
				MessageSnapshot found = this.actual.inspect(summary.id(), MAX_BYTES);
				if (found != null && found.state() == MessageState.READY
						&& group.equals(MessageFormat.decode(found.id(), found.storedPrefix())
							.headers()
							.get(MessageFormat.GROUP_HEADER))) {
					count++;
				}
			}
			if (offset + PAGE >= page.total()) {
				break;
			}
		}
		if (count != expected) {
			failWithMessage("Expected topic '%s' to have %d ready in group '%s', but it has %d (%s in all)",
					this.actual.topic(), expected, group, count, counts(this.actual.stats()));
		}
		return this;
	}

	/**
	 * Verifies how many messages are leased to a listener.
	 * @param expected the expected number
	 * @return this
	 */
	public TopicAssert hasInFlightCount(long expected) {
		return hasCount("in flight", this.actual.stats().inFlight(), expected);
	}

	/**
	 * Verifies how many messages are in the dead-letter set.
	 * @param expected the expected number
	 * @return this
	 */
	public TopicAssert hasDeadCount(long expected) {
		return hasCount("dead", this.actual.stats().dead(), expected);
	}

	/**
	 * Starts assertions on one message, which must be held by the topic.
	 * @param id the message id
	 * @return the message's assertions
	 */
	public MessageAssert message(String id) {
		MessageSnapshot found = inspect(id);
		if (found == null) {
			failWithMessage("Expected topic '%s' to hold message '%s', but it does not", this.actual.topic(), id);
		}
		return new MessageAssert(this.actual.topic(), found);
	}

	private TopicAssert hasIn(String id, MessageState state) {
		MessageSnapshot found = inspect(id);
		if (found == null) {
			failWithMessage("Expected topic '%s' to have message '%s' %s, but it holds no such message",
					this.actual.topic(), id, describe(state));
		}
		else if (found.state() != state) {
			failWithMessage("Expected topic '%s' to have message '%s' %s, but it is %s", this.actual.topic(), id,
					describe(state), describe(found.state()));
		}
		return this;
	}

	private TopicAssert hasCount(String state, long actualCount, long expected) {
		if (actualCount != expected) {
			failWithMessage("Expected topic '%s' to have %d %s, but it has %s", this.actual.topic(), expected, state,
					counts(this.actual.stats()));
		}
		return this;
	}

	private @Nullable MessageSnapshot inspect(String id) {
		isNotNull();
		return this.actual.inspect(id, MAX_BYTES);
	}

	static String describe(MessageState state) {
		return switch (state) {
			case SCHEDULED -> "scheduled";
			case READY -> "ready";
			case IN_FLIGHT -> "in flight";
			case DEAD -> "dead";
		};
	}

	private static String counts(TopicStats stats) {
		return stats.scheduled() + " scheduled, " + stats.ready() + " ready, " + stats.inFlight() + " in flight and "
				+ stats.dead() + " dead";
	}

}
