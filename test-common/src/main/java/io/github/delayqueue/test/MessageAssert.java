package io.github.delayqueue.test;

import java.time.Instant;

import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.StoredMessage;
import org.assertj.core.api.AbstractAssert;

/**
 * Assertions on one message of a topic, as it was when
 * {@link TopicAssert#message(String)} read it.
 */
public final class MessageAssert extends AbstractAssert<MessageAssert, MessageSnapshot> {

	private final String topic;

	private final StoredMessage stored;

	MessageAssert(String topic, MessageSnapshot snapshot) {
		super(snapshot, MessageAssert.class);
		this.topic = topic;
		this.stored = MessageFormat.decode(snapshot.id(), snapshot.storedPrefix());
	}

	/**
	 * Verifies the message's due time: the time it was sent for, or the time of its next
	 * attempt after a retry.
	 * @param expected the expected due time (millisecond precision)
	 * @return this
	 */
	public MessageAssert isDueAt(Instant expected) {
		Instant due = Instant.ofEpochMilli(this.stored.dueAtMillis());
		if (!due.equals(Instant.ofEpochMilli(expected.toEpochMilli()))) {
			failWithMessage("Expected message '%s' of topic '%s' to be due at %s, but it is due at %s",
					this.actual.id(), this.topic, expected, due);
		}
		return this;
	}

	/**
	 * Verifies the group the message was sent in.
	 * @param expected the group
	 * @return this
	 */
	public MessageAssert isInGroup(String expected) {
		String group = this.stored.headers().get(MessageFormat.GROUP_HEADER);
		if (!expected.equals(group)) {
			failWithMessage("Expected message '%s' of topic '%s' to be in group '%s', but it is %s", this.actual.id(),
					this.topic, expected, (group != null) ? "in group '" + group + "'" : "in no group");
		}
		return this;
	}

	/**
	 * Verifies that the message was sent in no group.
	 * @return this
	 */
	public MessageAssert isInNoGroup() {
		String group = this.stored.headers().get(MessageFormat.GROUP_HEADER);
		if (group != null) {
			failWithMessage("Expected message '%s' of topic '%s' to be in no group, but it is in group '%s'",
					this.actual.id(), this.topic, group);
		}
		return this;
	}

	/**
	 * Verifies how many attempts to handle the message failed so far.
	 * @param expected the expected number of failed attempts
	 * @return this
	 */
	public MessageAssert hasAttempts(int expected) {
		if (this.stored.attempts() != expected) {
			failWithMessage("Expected message '%s' of topic '%s' to have %d failed attempts, but it has %d",
					this.actual.id(), this.topic, expected, this.stored.attempts());
		}
		return this;
	}

	/**
	 * Verifies the last error of a dead message.
	 * @param expected text the error must contain
	 * @return this
	 */
	public MessageAssert hasLastErrorContaining(String expected) {
		String error = this.actual.lastError();
		if (error == null || !error.contains(expected)) {
			failWithMessage("Expected message '%s' of topic '%s' to have a last error containing '%s', but it is %s",
					this.actual.id(), this.topic, expected, (error != null) ? "'" + error + "'" : "none");
		}
		return this;
	}

	/**
	 * Verifies a header of the message.
	 * @param name the header name
	 * @param value its expected value
	 * @return this
	 */
	public MessageAssert hasHeader(String name, String value) {
		String found = this.stored.headers().get(name);
		if (!value.equals(found)) {
			failWithMessage("Expected message '%s' of topic '%s' to have header %s=%s, but it has %s", this.actual.id(),
					this.topic, name, value, this.stored.headers());
		}
		return this;
	}

}
