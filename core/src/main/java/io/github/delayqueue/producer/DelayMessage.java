package io.github.delayqueue.producer;

import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;

import io.github.delayqueue.time.Durations;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A message to send: topic, payload, an optional id, a delay or an absolute due time,
 * headers, and optionally a group. Build one with {@link #builder(String, Object)}; a
 * message without delay or due time is due at once.
 */
public final class DelayMessage {

	/** Longest message id accepted, in characters. */
	public static final int MAX_ID_LENGTH = 200;

	/** Longest delay, and furthest due time, accepted. */
	public static final Duration MAX_DELAY = Duration.ofDays(3653);

	/** Highest priority accepted; the lowest, and the default, is 0. */
	public static final int MAX_PRIORITY = 9;

	/** The longest deduplication window accepted. */
	public static final Duration MAX_DEDUPLICATION_WINDOW = Duration.ofDays(365);

	private final String topic;

	private final Object payload;

	private final @Nullable String id;

	private final @Nullable Duration delay;

	private final @Nullable Instant dueAt;

	private final Map<String, String> headers;

	private final boolean replaceIfPending;

	private final int priority;

	private final @Nullable Duration deduplicationWindow;

	private final @Nullable String group;

	private DelayMessage(Builder builder) {
		this.topic = builder.topic;
		this.payload = builder.payload;
		this.id = builder.id;
		this.delay = builder.delay;
		this.dueAt = builder.dueAt;
		this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(builder.headers));
		this.replaceIfPending = builder.replaceIfPending;
		this.priority = builder.priority;
		this.deduplicationWindow = builder.deduplicationWindow;
		this.group = builder.group;
	}

	/**
	 * Starts a message.
	 * @param topic the topic to send to
	 * @param payload the payload: a {@code String}, a {@code byte[]} or any object the
	 * JSON mapper can write
	 * @return a builder
	 */
	public static Builder builder(String topic, Object payload) {
		return new Builder(topic, payload);
	}

	/**
	 * @return the topic
	 */
	public String topic() {
		return this.topic;
	}

	/**
	 * @return the payload
	 */
	public Object payload() {
		return this.payload;
	}

	/**
	 * @return the caller's id, or {@code null} to have one generated
	 */
	public @Nullable String id() {
		return this.id;
	}

	/**
	 * @return the delay relative to the Redis server's clock, or {@code null}
	 */
	public @Nullable Duration delay() {
		return this.delay;
	}

	/**
	 * @return the absolute due time, or {@code null}
	 */
	public @Nullable Instant dueAt() {
		return this.dueAt;
	}

	/**
	 * @return the headers, in insertion order
	 */
	public Map<String, String> headers() {
		return this.headers;
	}

	static Duration checkDelay(Duration delay) {
		if (delay == null) {
			throw new InvalidMessageException("Delay must not be null");
		}
		if (delay.isNegative()) {
			throw new InvalidMessageException("Delay must not be negative, but was " + Durations.format(delay));
		}
		if (delay.compareTo(MAX_DELAY) > 0) {
			throw new InvalidMessageException("Delay must be at most ten years, but was " + Durations.format(delay));
		}
		return delay;
	}

	/**
	 * @return whether it replaces a scheduled message of the same id
	 */
	public boolean replaceIfPending() {
		return this.replaceIfPending;
	}

	/**
	 * @return the priority, 0 to {@value #MAX_PRIORITY}: among messages that are due, a
	 * higher one is claimed first
	 */
	public int priority() {
		return this.priority;
	}

	/**
	 * @return how long its id is remembered after the message was handled, or
	 * {@code null} if it is not
	 */
	public @Nullable Duration deduplicationWindow() {
		return this.deduplicationWindow;
	}

	/**
	 * @return the group it belongs to (a tenant, a destination), or {@code null} for a
	 * message of no group
	 * @see Builder#group(String)
	 */
	public @Nullable String group() {
		return this.group;
	}

	@Override
	public String toString() {
		return "DelayMessage[topic=" + this.topic + ", id=" + this.id + ", delay=" + this.delay + ", dueAt="
				+ this.dueAt + ", group=" + this.group + "]";
	}

	/**
	 * Builds a {@link DelayMessage}; {@link #build()} checks every value and names the
	 * first one that is wrong.
	 */
	public static final class Builder {

		private final String topic;

		private final Object payload;

		private @Nullable String id;

		private @Nullable Duration delay;

		private @Nullable Instant dueAt;

		private final Map<String, String> headers = new LinkedHashMap<>();

		private boolean replaceIfPending;

		private int priority;

		private @Nullable Duration deduplicationWindow;

		private @Nullable String group;

		private Builder(String topic, Object payload) {
			this.topic = topic;
			this.payload = payload;
		}

		/**
		 * Sets the message id. Sending an id that is still pending or in flight is a
		 * no-op reported as a duplicate.
		 * @param id at most {@value DelayMessage#MAX_ID_LENGTH} characters, not blank,
		 * without control characters or unpaired surrogates
		 * @return this builder
		 */
		public Builder id(String id) {
			this.id = id;
			return this;
		}

		/**
		 * Sets the delay, measured from the Redis server's clock when the message is
		 * stored.
		 * @param delay zero or positive, at most ten years
		 * @return this builder
		 */
		public Builder delay(Duration delay) {
			this.delay = delay;
			return this;
		}

		/**
		 * Sets the absolute due time; a time in the past means due at once.
		 * @param dueAt at most ten years from now
		 * @return this builder
		 */
		public Builder dueAt(Instant dueAt) {
			this.dueAt = dueAt;
			return this;
		}

		/**
		 * Adds a header, delivered with the message.
		 * @param name header name; names starting with {@code delay-queue-} are reserved
		 * for the queue's own
		 * @param value header value
		 * @return this builder
		 */
		public Builder header(String name, String value) {
			if (name == null || value == null) {
				throw new InvalidMessageException("Header name and value must not be null");
			}
			if (name.startsWith(MessageFormat.RESERVED_HEADER_PREFIX)) {
				throw new InvalidMessageException("Header '" + name + "' is reserved: names starting with '"
						+ MessageFormat.RESERVED_HEADER_PREFIX + "' are the queue's own");
			}
			this.headers.put(name, value);
			return this;
		}

		/**
		 * Replaces a message of the same id that is still scheduled: its payload, headers
		 * and due time become this message's, its attempts are kept ("remind me ten
		 * minutes after the last change" is then one call per change). A message of that
		 * id that is already ready or in flight is never replaced: the send is then a
		 * duplicate, even with the same payload (without this, the same payload again is
		 * reported as stored). Needs an {@link #id(String) id}.
		 * @return this builder
		 */
		public Builder replaceIfPending() {
			this.replaceIfPending = true;
			return this;
		}

		/**
		 * Sets the priority: among the messages of the topic that are due and not yet
		 * claimed, those of a higher priority are claimed first; within one priority, in
		 * due order. Retries, lease expiry, release and dead-letter replay keep it.
		 * @param priority 0 (the default) to {@value DelayMessage#MAX_PRIORITY}
		 * @return this builder
		 */
		public Builder priority(int priority) {
			this.priority = priority;
			return this;
		}

		/**
		 * Remembers the id for a while after the message was handled (acknowledged): a
		 * send of the same id meanwhile stores nothing and is reported as a duplicate, so
		 * that a producer retrying long after the first send (a lost reply, a replayed
		 * event) causes no second delivery. Each partition of a topic remembers at most
		 * {@code delay-queue.producer.max-remembered-ids} ids; past it, those whose
		 * windows end first are forgotten. Needs an {@link #id(String) id}.
		 * <p>
		 * What a send of the same id reports, in each phase:
		 * <ul>
		 * <li>while the message is pending (scheduled, ready or in flight), the same body
		 * is taken as the same request sent again (a lost reply): it reports
		 * {@code duplicate() == false} with the due time the message already has, and
		 * nothing new is stored, so there is still one message; another body reports
		 * {@code duplicate() == true};</li>
		 * <li>once the message was handled, within the window, any send reports
		 * {@code duplicate() == true}, with {@code dueAt()} the end of the window, and
		 * stores nothing;</li>
		 * <li>after the window, the send stores a new message.</li>
		 * </ul>
		 * @param window how long the id is remembered, up to
		 * {@link DelayMessage#MAX_DEDUPLICATION_WINDOW}
		 * @return this builder
		 */
		public Builder deduplicateFor(Duration window) {
			this.deduplicationWindow = window;
			return this;
		}

		/**
		 * Puts the message in a group, such as one per tenant or one per destination.
		 * When several groups of a topic have due messages, claims take from them in
		 * turn, so that one group's backlog delays the others by a bounded amount,
		 * whatever its size; the messages of no group take their turn together, as one
		 * more group. Priorities order the messages within a group. Listeners see the
		 * group as {@code Delivery.group()}. On a topic spread over several partitions, a
		 * group's messages go to its group's partition (not its id's), where its limit,
		 * order and pause hold; the same id sent in two groups is then two messages.
		 * @param group 1 to {@value NewMessage#MAX_GROUP_LENGTH} characters, none of them
		 * a control character
		 * @return this builder
		 * @throws InvalidMessageException at once, naming what is wrong with the name
		 */
		public Builder group(String group) {
			if (group == null) {
				throw new InvalidMessageException("Group must not be null");
			}
			try {
				this.group = NewMessage.checkGroup(group);
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidMessageException(ex.getMessage());
			}
			return this;
		}

		/**
		 * Checks the values and builds the message.
		 * @return the message
		 * @throws InvalidMessageException naming the first value that is not acceptable
		 */
		public DelayMessage build() {
			Topics.requireValid(this.topic);
			if (this.payload == null) {
				throw new InvalidMessageException("Payload for topic '" + this.topic + "' must not be null");
			}
			if (this.id != null) {
				MessageIds.requireValid(this.id);
			}
			else if (this.replaceIfPending) {
				throw new InvalidMessageException("A message that replaces a pending one needs the id of the message to"
						+ " replace (DelayMessage.Builder.id)");
			}
			if (this.deduplicationWindow != null) {
				if (this.id == null) {
					throw new InvalidMessageException(
							"A message with a deduplication window needs an id (DelayMessage.Builder.id)");
				}
				if (this.deduplicationWindow.compareTo(Duration.ofMillis(1)) < 0
						|| this.deduplicationWindow.compareTo(MAX_DEDUPLICATION_WINDOW) > 0) {
					throw new InvalidMessageException(
							"A deduplication window must be from 1ms to " + Durations.format(MAX_DEDUPLICATION_WINDOW)
									+ ", but was " + Durations.format(this.deduplicationWindow));
				}
			}
			if (this.delay != null && this.dueAt != null) {
				throw new InvalidMessageException("Set either a delay or a due time, not both");
			}
			if (this.delay != null) {
				checkDelay(this.delay);
			}
			if (this.dueAt != null && this.dueAt.isAfter(Instant.now().plus(MAX_DELAY))) {
				throw new InvalidMessageException("Due time must be at most ten years away, but was " + this.dueAt);
			}
			if (this.priority < 0 || this.priority > MAX_PRIORITY) {
				throw new InvalidMessageException(
						"Priority must be between 0 and " + MAX_PRIORITY + ", but was " + this.priority);
			}
			return new DelayMessage(this);
		}

	}

}
