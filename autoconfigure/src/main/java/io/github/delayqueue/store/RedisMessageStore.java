package io.github.delayqueue.store;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.delayqueue.core.SendResult;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * Runs the queue's state transitions against Redis, each as one Lua script, so that no message is
 * lost or duplicated between two steps. Thread-safe.
 */
public class RedisMessageStore {

	private static final String DELAY = "d";

	private static final String ABSOLUTE = "a";

	private static final int READY_HEAD_LOOKUP = 100;

	private final RedisTemplate<String, byte[]> redis;

	private final String prefix;

	private final String channel;

	private final DelayQueueScripts scripts = new DelayQueueScripts();

	/**
	 * Creates a store.
	 * @param connectionFactory the Redis connection factory
	 * @param prefix the prefix of every key
	 */
	public RedisMessageStore(RedisConnectionFactory connectionFactory, String prefix) {
		RedisTemplate<String, byte[]> template = new RedisTemplate<>();
		template.setConnectionFactory(connectionFactory);
		template.setKeySerializer(RedisSerializer.string());
		template.setValueSerializer(RedisSerializer.byteArray());
		template.setHashKeySerializer(RedisSerializer.string());
		template.setHashValueSerializer(RedisSerializer.byteArray());
		template.afterPropertiesSet();
		this.redis = template;
		this.prefix = prefix;
		this.channel = TopicKeys.signalChannel(prefix);
	}

	/** @return the key prefix */
	public String prefix() {
		return this.prefix;
	}

	/** @return the pub/sub channel on which scripts publish wake-up signals */
	public String signalChannel() {
		return this.channel;
	}

	/**
	 * The keys of a topic.
	 * @param topic the topic
	 * @return its keys
	 */
	public TopicKeys keys(String topic) {
		return new TopicKeys(this.prefix, topic);
	}

	/**
	 * Stores and schedules messages of one topic in one script call; ids already stored are
	 * reported as duplicates and left unchanged.
	 * @param topic the topic
	 * @param messages the messages, in send order
	 * @return one result per message, in the same order
	 */
	public List<SendResult> send(String topic, List<NewMessage> messages) {
		TopicKeys keys = keys(topic);
		List<?> reply = run(this.scripts.send, List.of(keys.messages(), keys.scheduled()),
				sendArguments(topic, messages));
		return sendResults(messages, reply);
	}

	private List<Object> sendArguments(String topic, List<NewMessage> messages) {
		List<Object> args = new ArrayList<>(2 + messages.size() * 4);
		args.add(this.channel);
		args.add(topic);
		for (NewMessage message : messages) {
			args.add(message.id());
			args.add(message.relative() ? DELAY : ABSOLUTE);
			args.add(message.when());
			args.add(message.body());
		}
		return args;
	}

	private static List<SendResult> sendResults(List<NewMessage> messages, List<?> reply) {
		List<SendResult> results = new ArrayList<>(messages.size());
		for (int i = 0; i < messages.size(); i++) {
			boolean duplicate = number(reply.get(2 * i)) == 1;
			Instant dueAt = Instant.ofEpochMilli(number(reply.get(2 * i + 1)));
			results.add(new SendResult(messages.get(i).id(), dueAt, duplicate));
		}
		return results;
	}

	/**
	 * Stores and schedules messages of several topics: one script call per topic, all sent in one
	 * pipeline, so the whole batch costs one round trip.
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages
	 */
	public Map<String, List<SendResult>> send(Map<String, List<NewMessage>> messagesByTopic) {
		if (messagesByTopic.size() == 1) {
			Map.Entry<String, List<NewMessage>> only = messagesByTopic.entrySet().iterator().next();
			return Map.of(only.getKey(), send(only.getKey(), only.getValue()));
		}
		List<String> topics = new ArrayList<>(messagesByTopic.keySet());
		List<Object> replies;
		try {
			replies = sendPipelined(messagesByTopic, topics);
		}
		catch (DataAccessException ex) {
			if (!isNoScript(ex)) {
				throw ex;
			}
			// Redis lost its script cache (restart or SCRIPT FLUSH): no call of the pipeline ran.
			this.redis.execute((RedisCallback<String>) (connection) -> connection.scriptingCommands()
				.scriptLoad(this.scripts.send.getScriptAsString().getBytes(StandardCharsets.UTF_8)));
			replies = sendPipelined(messagesByTopic, topics);
		}
		Map<String, List<SendResult>> results = new LinkedHashMap<>();
		for (int t = 0; t < topics.size(); t++) {
			results.put(topics.get(t), sendResults(messagesByTopic.get(topics.get(t)), (List<?>) replies.get(t)));
		}
		return results;
	}

	private List<Object> sendPipelined(Map<String, List<NewMessage>> messagesByTopic, List<String> topics) {
		byte[] sha = this.scripts.send.getSha1().getBytes(StandardCharsets.US_ASCII);
		return this.redis.executePipelined((RedisCallback<Object>) (connection) -> {
			for (String topic : topics) {
				TopicKeys keys = keys(topic);
				List<Object> args = sendArguments(topic, messagesByTopic.get(topic));
				byte[][] keysAndArgs = new byte[2 + args.size()][];
				keysAndArgs[0] = keys.messages().getBytes(StandardCharsets.UTF_8);
				keysAndArgs[1] = keys.scheduled().getBytes(StandardCharsets.UTF_8);
				for (int i = 0; i < args.size(); i++) {
					keysAndArgs[2 + i] = ScriptArgumentSerializer.INSTANCE.serialize(args.get(i));
				}
				connection.scriptingCommands().evalSha(sha, ReturnType.MULTI, 2, keysAndArgs);
			}
			return null;
		}, RedisSerializer.byteArray());
	}

	private static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Moves due messages of a topic to its ready list.
	 * @param topic the topic
	 * @param limit the largest number of messages to move
	 * @return what moved and when the next message is due
	 */
	public PromoteResult promote(String topic, int limit) {
		return promote(topic, limit, Duration.ZERO);
	}

	/**
	 * Moves messages of a topic that are due, or due within the lookahead, to its ready list.
	 * @param topic the topic
	 * @param limit the largest number of messages to move
	 * @param lookahead how long before their due time messages may move
	 * @return what moved, when the next message is due and when the next lease ends
	 */
	public PromoteResult promote(String topic, int limit, Duration lookahead) {
		TopicKeys keys = keys(topic);
		List<?> reply = run(this.scripts.promote, List.of(keys.scheduled(), keys.ready(), keys.inFlight()),
				List.of(limit, this.channel, topic, lookahead.toMillis()));
		return new PromoteResult((int) number(reply.get(0)), number(reply.get(1)), number(reply.get(2)));
	}

	/**
	 * Leases up to {@code limit} ready messages of a topic that are due.
	 * @param topic the topic
	 * @param limit the largest number of messages to claim
	 * @param lease how long the lease lasts
	 * @return the claimed messages, possibly none
	 */
	public List<ClaimedMessage> claim(String topic, int limit, Duration lease) {
		return claim(topic, limit, 0, lease);
	}

	/**
	 * Leases ready messages of a topic: up to {@code limit} that are due, and up to
	 * {@code earlyLimit} that the broker made ready before their due time.
	 * @param topic the topic
	 * @param limit the largest number of due messages to claim
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @return the claimed messages, possibly none
	 */
	public List<ClaimedMessage> claim(String topic, int limit, int earlyLimit, Duration lease) {
		TopicKeys keys = keys(topic);
		List<?> reply = run(this.scripts.claim,
				List.of(keys.ready(), keys.inFlight(), keys.messages(), keys.scheduled()),
				List.of(limit, lease.toMillis(), earlyLimit));
		long deadline = number(reply.get(0));
		long claimedAtMicros = number(reply.get(1));
		List<ClaimedMessage> claimed = new ArrayList<>((reply.size() - 2) / 2);
		for (int i = 2; i + 1 < reply.size(); i += 2) {
			claimed.add(new ClaimedMessage(text(reply.get(i)), deadline, claimedAtMicros, (byte[]) reply.get(i + 1)));
		}
		return claimed;
	}

	/**
	 * Acknowledges a message: it is deleted with all its data.
	 * @param topic the topic
	 * @param id the message id
	 * @param lease the lease deadline the caller holds
	 * @return {@code true} if acknowledged, {@code false} if the lease had been lost
	 */
	public boolean ack(String topic, String id, long lease) {
		return ack(topic, List.of(id), List.of(lease)).get(0);
	}

	/**
	 * Acknowledges messages in one script call: each is deleted with all its data.
	 * @param topic the topic
	 * @param ids the message ids
	 * @param leases the lease deadline the caller holds for each id, in the same order
	 * @return for each id, {@code true} if acknowledged, {@code false} if its lease had been lost
	 */
	public List<Boolean> ack(String topic, List<String> ids, List<Long> leases) {
		TopicKeys keys = keys(topic);
		List<Object> args = new ArrayList<>(ids.size() * 2);
		for (int i = 0; i < ids.size(); i++) {
			args.add(ids.get(i));
			args.add(leases.get(i));
		}
		List<?> reply = run(this.scripts.ack, List.of(keys.inFlight(), keys.messages()), args);
		return reply.stream().map((acked) -> number(acked) == 1).toList();
	}

	/**
	 * Schedules the next attempt of a message whose delivery failed.
	 * @param topic the topic
	 * @param id the message id
	 * @param lease the lease deadline the caller holds
	 * @param backoff how long to wait before the next attempt
	 * @return the due time of the next attempt (epoch ms), or -1 if the lease had been lost
	 */
	public long retry(String topic, String id, long lease, Duration backoff) {
		TopicKeys keys = keys(topic);
		return run(this.scripts.retry, List.of(keys.inFlight(), keys.messages(), keys.scheduled()),
				List.of(id, lease, backoff.toMillis(), this.channel, topic));
	}

	/**
	 * Moves a message to the topic's dead-letter set.
	 * @param topic the topic
	 * @param id the message id
	 * @param lease the lease deadline the caller holds
	 * @param error the last error, kept with the message
	 * @return {@code true} if dead-lettered, {@code false} if the lease had been lost
	 */
	public boolean deadLetter(String topic, String id, long lease, String error) {
		TopicKeys keys = keys(topic);
		Long reply = run(this.scripts.deadLetter,
				List.of(keys.inFlight(), keys.messages(), keys.dead(), keys.deadMessages(), keys.deadErrors()),
				List.of(id, lease, error));
		return reply == 1;
	}

	/**
	 * Hands an unfinished message back: it is ready again at once, its attempts unchanged.
	 * @param topic the topic
	 * @param id the message id
	 * @param lease the lease deadline the caller holds
	 * @return {@code true} if it is ready again, {@code false} if the lease had been lost
	 */
	public boolean release(String topic, String id, long lease) {
		TopicKeys keys = keys(topic);
		Long reply = run(this.scripts.release, List.of(keys.inFlight(), keys.ready()),
				List.of(id, lease, this.channel, topic));
		return reply == 1;
	}

	/**
	 * Extends the lease of a message whose handler is still working.
	 * @param topic the topic
	 * @param id the message id
	 * @param lease the lease deadline the caller holds
	 * @param length the new lease length, from Redis time
	 * @return the new lease deadline (epoch ms), or -1 if the lease had been lost
	 */
	public long extendLease(String topic, String id, long lease, Duration length) {
		TopicKeys keys = keys(topic);
		return run(this.scripts.extendLease, List.of(keys.inFlight()), List.of(id, lease, length.toMillis()));
	}

	/**
	 * Takes back messages whose lease has expired.
	 * @param topic the topic
	 * @param limit the largest number of messages to take back
	 * @param maxAttempts the topic's maximum attempts: a message that reaches it is dead-lettered
	 * @return what was taken back and when the next lease ends
	 */
	public LeaseExpiryResult expireLeases(String topic, int limit, int maxAttempts) {
		TopicKeys keys = keys(topic);
		List<?> reply = run(this.scripts.expireLeases,
				List.of(keys.inFlight(), keys.messages(), keys.ready(), keys.dead(), keys.deadMessages(),
						keys.deadErrors()),
				List.of(limit, maxAttempts, this.channel, topic));
		int requeued = (int) number(reply.get(0));
		List<String> ids = reply.subList(3, reply.size()).stream().map(RedisMessageStore::text).toList();
		return new LeaseExpiryResult(ids.subList(0, requeued), ids.subList(requeued, ids.size()), number(reply.get(2)));
	}

	/**
	 * Deletes a pending message.
	 * @param topic the topic
	 * @param id the message id
	 * @return {@code true} if it was scheduled or ready and is now gone
	 */
	public boolean cancel(String topic, String id) {
		TopicKeys keys = keys(topic);
		Long reply = run(this.scripts.cancel, List.of(keys.messages(), keys.scheduled(), keys.inFlight()),
				List.of(id));
		return reply == 1;
	}

	/**
	 * Gives a pending message a new due time.
	 * @param topic the topic
	 * @param id the message id
	 * @param delay the new delay, from Redis time
	 * @return the new due time (epoch ms), or -1 if the message is not pending
	 */
	public long reschedule(String topic, String id, Duration delay) {
		TopicKeys keys = keys(topic);
		return run(this.scripts.reschedule, List.of(keys.messages(), keys.scheduled(), keys.inFlight()),
				List.of(id, DELAY, delay.toMillis(), this.channel, topic));
	}

	/**
	 * Moves aside the keys of a topic that hold the wrong Redis type (written by something else),
	 * so that they no longer stall the topic: each is renamed to
	 * {@code <key>:quarantined:<epoch ms>} and kept for inspection.
	 * @param topic the topic
	 * @return the keys that were moved aside
	 */
	public List<String> quarantineWrongTypes(String topic) {
		List<String> moved = new ArrayList<>();
		keys(topic).types().forEach((key, expected) -> {
			DataType actual = this.redis.type(key);
			if (actual != null && actual != DataType.NONE && actual != expected) {
				this.redis.rename(key, key + ":quarantined:" + System.currentTimeMillis());
				moved.add(key + " (" + actual.code() + ", expected " + expected.code() + ")");
			}
		});
		return moved;
	}

	/**
	 * Whether a failure is Redis refusing a command for a key of the wrong type.
	 * @param ex the failure
	 * @return {@code true} for a WRONGTYPE error
	 */
	public static boolean isWrongType(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains("WRONGTYPE")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Moves dead-lettered messages back to the schedule, due at once, with their attempts reset to 0
	 * and their last error dropped: looks at up to {@code limit} dead messages from a rank of the
	 * dead-letter set on, oldest first. Messages whose id was sent anew since they died, or whose
	 * stored header is unreadable, stay dead at their rank.
	 * @param topic the topic
	 * @param limit the largest number of dead messages to look at
	 * @param fromRank the rank in the dead-letter set to start at, 0 for the oldest
	 * @return the replayed ids and how many were left dead
	 */
	public ReplayResult replayDead(String topic, int limit, long fromRank) {
		TopicKeys keys = keys(topic);
		return replayResult(run(this.scripts.replay, replayKeys(keys), List.of(this.channel, topic, limit, fromRank)));
	}

	/**
	 * Moves the given dead-lettered messages back to the schedule, due at once, with their attempts
	 * reset to 0 and their last error dropped.
	 * @param topic the topic
	 * @param ids the ids, at most 1000
	 * @return the replayed ids and how many were left dead or not found
	 */
	public ReplayResult replayDead(String topic, List<String> ids) {
		TopicKeys keys = keys(topic);
		List<Object> args = new ArrayList<>(4 + ids.size());
		args.addAll(List.of(this.channel, topic, ids.size(), 0));
		args.addAll(ids);
		return replayResult(run(this.scripts.replay, replayKeys(keys), args));
	}

	private static List<String> replayKeys(TopicKeys keys) {
		return List.of(keys.dead(), keys.deadMessages(), keys.deadErrors(), keys.messages(), keys.scheduled());
	}

	private static ReplayResult replayResult(List<?> reply) {
		List<String> replayed = reply.subList(2, reply.size()).stream().map(RedisMessageStore::text).toList();
		return new ReplayResult(replayed, (int) number(reply.get(1)));
	}

	/**
	 * Deletes the oldest dead-lettered messages of a topic for good.
	 * @param topic the topic
	 * @param limit the largest number of messages to delete
	 * @return how many were deleted
	 */
	public long purgeDead(String topic, int limit) {
		TopicKeys keys = keys(topic);
		List<?> reply = run(this.scripts.purgeDead, List.of(keys.dead(), keys.deadMessages(), keys.deadErrors()),
				List.of(limit));
		return number(reply.get(0));
	}

	/**
	 * Deletes the given dead-lettered messages for good; ids that are not dead are left alone.
	 * @param topic the topic
	 * @param ids the ids, at most 1000
	 * @return how many were deleted
	 */
	public long purgeDead(String topic, List<String> ids) {
		TopicKeys keys = keys(topic);
		List<Object> args = new ArrayList<>(1 + ids.size());
		args.add(ids.size());
		args.addAll(ids);
		List<?> reply = run(this.scripts.purgeDead, List.of(keys.dead(), keys.deadMessages(), keys.deadErrors()), args);
		return number(reply.get(0));
	}

	/**
	 * Counts a topic's messages in each state and reads its next and oldest waiting due times, at one
	 * instant; changes nothing.
	 * @param topic the topic
	 * @return the counts and times
	 */
	public TopicStats stats(String topic) {
		TopicKeys keys = keys(topic);
		List<?> reply = run(this.scripts.stats,
				List.of(keys.messages(), keys.scheduled(), keys.ready(), keys.inFlight(), keys.dead()),
				List.of(READY_HEAD_LOOKUP));
		long stored = number(reply.get(1));
		long scheduled = number(reply.get(2));
		long inFlight = number(reply.get(3));
		return new TopicStats(number(reply.get(0)), scheduled, Math.max(0, stored - scheduled - inFlight), inFlight,
				number(reply.get(4)), number(reply.get(5)), number(reply.get(6)));
	}

	/**
	 * Reads one page of a topic's messages in one state, oldest first, without their payloads;
	 * changes nothing. Ready ids that claim would drop are left out of a ready page.
	 * @param topic the topic
	 * @param state the state
	 * @param offset the rank of the first message, 0-based
	 * @param limit the largest number of messages
	 * @return the page
	 */
	public MessagePage page(String topic, MessageState state, long offset, int limit) {
		TopicKeys keys = keys(topic);
		String index = switch (state) {
			case SCHEDULED -> keys.scheduled();
			case READY -> keys.ready();
			case IN_FLIGHT -> keys.inFlight();
			case DEAD -> keys.dead();
		};
		String messages = (state == MessageState.DEAD) ? keys.deadMessages() : keys.messages();
		List<?> reply = run(this.scripts.page,
				List.of(index, messages, keys.deadErrors(), keys.scheduled(), keys.inFlight()),
				List.of(state.code(), offset, limit));
		List<MessageSummary> summaries = new ArrayList<>((reply.size() - 1) / 5);
		for (int i = 1; i + 4 < reply.size(); i += 5) {
			String error = text(reply.get(i + 4));
			summaries.add(new MessageSummary(text(reply.get(i)), state, number(reply.get(i + 1)),
					(int) Math.min(Integer.MAX_VALUE, number(reply.get(i + 2))), number(reply.get(i + 3)),
					(state == MessageState.DEAD) ? error : null));
		}
		return new MessagePage(number(reply.get(0)), summaries);
	}

	/**
	 * Finds one message in whatever state it is; changes nothing.
	 * @param topic the topic
	 * @param id the message id
	 * @param maxBytes the most bytes of the stored message to read
	 * @return the message, or {@code null} if the topic has no message with that id
	 */
	public @Nullable MessageSnapshot inspect(String topic, String id, int maxBytes) {
		TopicKeys keys = keys(topic);
		List<?> reply = run(this.scripts.inspect, List.of(keys.messages(), keys.scheduled(), keys.inFlight(),
				keys.dead(), keys.deadMessages(), keys.deadErrors()), List.of(id, maxBytes));
		if (reply.isEmpty()) {
			return null;
		}
		MessageState state = MessageState.ofCode(text(reply.get(0)));
		String error = text(reply.get(4));
		return new MessageSnapshot(id, state, number(reply.get(1)), number(reply.get(2)), (byte[]) reply.get(3),
				(state == MessageState.DEAD) ? error : null);
	}

	/**
	 * Finds the topics that have messages under this store's prefix, with {@code SCAN}: for
	 * operations, never for a hot path.
	 * @param max the most topics to return
	 * @return topic names in alphabetical order, at most {@code max}
	 */
	public List<String> findTopics(int max) {
		String pattern = globEscape(this.prefix) + ":{*}:[mzd]";
		Set<String> topics = new TreeSet<>();
		int start = this.prefix.length() + 2;
		try (Cursor<String> keys = this.redis.scan(ScanOptions.scanOptions().match(pattern).count(1000).build())) {
			while (keys.hasNext() && topics.size() < max) {
				String key = keys.next();
				if (key.length() > start + 3 && key.startsWith(this.prefix + ":{") && key.startsWith("}:", key.length() - 3)) {
					topics.add(key.substring(start, key.length() - 3));
				}
			}
		}
		return new ArrayList<>(topics);
	}

	private static String globEscape(String text) {
		StringBuilder escaped = new StringBuilder(text.length());
		for (char c : text.toCharArray()) {
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				escaped.append('\\');
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

	/**
	 * Checks that Redis answers.
	 * @throws DataAccessException if it does not
	 */
	public void ping() {
		this.redis.execute((RedisCallback<String>) (connection) -> connection.ping());
	}

	private <T> T run(RedisScript<T> script, List<String> keys, List<?> args) {
		T result = this.redis.execute(script, ScriptArgumentSerializer.INSTANCE, rawReplies(), keys, args.toArray());
		if (result == null) {
			throw new IllegalStateException("Redis returned no reply to script " + script.getSha1());
		}
		return result;
	}

	@SuppressWarnings("unchecked")
	private static <T> RedisSerializer<T> rawReplies() {
		return (RedisSerializer<T>) RedisSerializer.byteArray();
	}

	private static long number(Object value) {
		return ((Number) value).longValue();
	}

	private static String text(Object value) {
		return new String((byte[]) value, StandardCharsets.UTF_8);
	}

}
