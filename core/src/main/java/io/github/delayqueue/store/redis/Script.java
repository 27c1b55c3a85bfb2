package io.github.delayqueue.store.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import io.github.delayqueue.store.NewMessage;

import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of the queue, one per state transition (and four that only read, five
 * that keep a topic's number of partitions, six of recurring schedules, and one that has
 * a partition copy its dead letters), each with the keys it takes in the order its
 * {@code .lua} header names them: the one place in Java that knows a script's key order.
 * Each script is read from the {@code .lua} file beside this class with
 * {@code common.lua} and the helpers it names in front (see {@link ScriptSource}); a
 * {@link ScriptClock} puts its clock and the way signals are sent in front of those.
 * {@code ScriptHeadersTests} checks every declaration against its file's header.
 */
enum Script {

	SEND(false, Key.MESSAGES, Key.SCHEDULED, Key.PRIORITIES, Key.PARTITION_COUNT, Key.REMEMBERED, Key.DEDUPLICATION),

	PROMOTE(false, with(withPriorities(Key.SCHEDULED, Key.READY, Key.IN_FLIGHT), Key.PARTITION_COUNT)),

	CLAIM(false,
			withPriorities(Key.READY, Key.IN_FLIGHT, Key.MESSAGES, Key.SCHEDULED, Key.LEASES, Key.CLAIM_RECORD,
					Key.RATE_WINDOW)),

	ACK(false, Key.IN_FLIGHT, Key.MESSAGES, Key.LEASES, Key.PRIORITIES, Key.REMEMBERED, Key.DEDUPLICATION),

	RETRY(true, Key.IN_FLIGHT, Key.MESSAGES, Key.SCHEDULED, Key.LEASES),

	DEAD_LETTER(true, Key.IN_FLIGHT, Key.MESSAGES, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.LEASES,
			Key.PRIORITIES, Key.DEAD_PRIORITIES, Key.DEAD_LETTERS_WATCH, Key.DEAD_LETTERS_MESSAGES,
			Key.DEAD_LETTERS_READY),

	EXPIRE_LEASES(false,
			with(withPriorities(Key.IN_FLIGHT, Key.MESSAGES, Key.READY, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS,
					Key.LEASES), Key.DEAD_PRIORITIES, Key.DEAD_LETTERS_WATCH, Key.DEAD_LETTERS_MESSAGES,
					Key.DEAD_LETTERS_READY)),

	RELEASE(false, withPriorities(Key.IN_FLIGHT, Key.READY, Key.LEASES)),

	RELEASE_CLAIM(false, withPriorities(Key.IN_FLIGHT, Key.READY, Key.LEASES, Key.CLAIM_RECORD)),

	EXTEND_LEASES(false, Key.IN_FLIGHT, Key.LEASES),

	CANCEL(true, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT, Key.PRIORITIES, Key.PARTITION_COUNT),

	RESCHEDULE(true, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT, Key.PARTITION_COUNT),

	REPLAY(false, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.MESSAGES, Key.SCHEDULED, Key.PRIORITIES,
			Key.DEAD_PRIORITIES, Key.PARTITION_COUNT, Key.REMEMBERED),

	PURGE_DEAD(true, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.DEAD_PRIORITIES, Key.PARTITION_COUNT),

	STATS(false, with(withPriorities(Key.MESSAGES, Key.SCHEDULED, Key.READY, Key.IN_FLIGHT, Key.DEAD), Key.REMEMBERED)),

	PAGE(false,
			with(withPriorities(Key.STATE_INDEX, Key.STATE_MESSAGES, Key.DEAD_ERRORS, Key.SCHEDULED, Key.IN_FLIGHT),
					Key.DEAD_PRIORITIES)),

	INSPECT(false, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS,
			Key.PRIORITIES, Key.DEAD_PRIORITIES, Key.PARTITION_COUNT),

	PARTITION_COUNT(false, Key.PARTITION_COUNT, Key.PARTITION_CHANGE),

	BEGIN_PARTITION_CHANGE(false, Key.PARTITION_COUNT, Key.PARTITION_CHANGE, Key.DEAD_LETTERS_WATCH),

	MARK_PARTITION(false, Key.PARTITION_COUNT, Key.MESSAGES, Key.DEAD, Key.DEAD_LETTERS_MESSAGES, Key.DEAD_LETTERS_DEAD,
			Key.SCHEDULES, Key.DEAD_LETTERS_WATCH, Key.REMEMBERED),

	COMMIT_PARTITION_CHANGE(false, Key.PARTITION_COUNT, Key.PARTITION_CHANGE, Key.MESSAGES, Key.DEAD,
			Key.DEAD_LETTERS_MESSAGES, Key.DEAD_LETTERS_DEAD, Key.SCHEDULES, Key.REMEMBERED),

	ABORT_PARTITION_CHANGE(true, Key.PARTITION_CHANGE),

	SAVE_SCHEDULE(false, Key.SCHEDULES, Key.PARTITION_COUNT),

	ADVANCE_SCHEDULE(false, Key.SCHEDULES, Key.MESSAGES, Key.SCHEDULED, Key.PARTITION_COUNT),

	PAUSE_SCHEDULE(false, Key.SCHEDULES, Key.PARTITION_COUNT),

	REMOVE_SCHEDULE(true, Key.SCHEDULES, Key.PARTITION_COUNT),

	SCHEDULES(false, Key.SCHEDULES),

	SCHEDULE_REGISTRY(false, Key.SCHEDULE_REGISTRY),

	WATCH_DEAD_LETTERS(true, Key.DEAD_LETTERS_WATCH),

	DATASET_MARKER(false, Key.DATASET_MARKER);

	/** The highest priority; priority 0 messages wait in the ready list itself. */
	static final int MAX_PRIORITY = NewMessage.MAX_PRIORITY;

	private final List<Key> keys;

	private final boolean integerReply;

	private final String text;

	Script(boolean integerReply, Key... keys) {
		this.keys = List.of(keys);
		this.integerReply = integerReply;
		this.text = ScriptSource.script(fileName());
	}

	/**
	 * @return the name of the script's file, without {@code .lua}
	 */
	String fileName() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * @return the keys the script takes, in order
	 */
	List<Key> keys() {
		return this.keys;
	}

	/**
	 * Builds the script with a prelude and the helpers in front.
	 * @param prelude the Lua text defining {@code now_us()}, {@code now_ms()} and
	 * {@code signal()}
	 * @return the script, ready to run
	 */
	RedisScript<?> withPrelude(String prelude) {
		String source = prelude + this.text;
		return this.integerReply ? new DefaultRedisScript<>(source, Long.class)
				: new DefaultRedisScript<>(source, List.class);
	}

	/**
	 * Names the script's keys, in order.
	 * @param names the key name of each role
	 * @return the key names
	 */
	List<String> keyNames(Function<Key, String> names) {
		return this.keys.stream().map(names).toList();
	}

	/**
	 * The keys a script that moves ready messages takes: its own, then the priorities
	 * hash and the ready list of each priority from 1 up (so that in Lua the list of
	 * priority {@code p} is {@code KEYS[#own + 1 + p]}).
	 */
	private static Key[] withPriorities(Key... own) {
		List<Key> keys = new ArrayList<>(List.of(own));
		keys.add(Key.PRIORITIES);
		keys.addAll(Key.priorityReadyLists());
		return keys.toArray(Key[]::new);
	}

	/** Keys followed by more keys. */
	private static Key[] with(Key[] keys, Key... more) {
		List<Key> all = new ArrayList<>(List.of(keys));
		all.addAll(List.of(more));
		return all.toArray(Key[]::new);
	}

	/**
	 * A role a key plays in the scripts, named as the {@code .lua} headers name it, with
	 * its type.
	 */
	enum Key {

		MESSAGES("messages", "HASH"),

		SCHEDULED("scheduled", "ZSET"),

		READY("ready", "LIST"),

		IN_FLIGHT("in-flight", "ZSET"),

		LEASES("leases", "HASH"),

		CLAIM_RECORD("claim record", "STRING"),

		DEAD("dead", "ZSET"),

		DEAD_MESSAGES("dead messages", "HASH"),

		DEAD_ERRORS("dead errors", "HASH"),

		/** The index of the state a page is read from. */
		STATE_INDEX("state index", "ZSET or LIST"),

		/** The hash holding the stored messages of the state a page is read from. */
		STATE_MESSAGES("state messages", "HASH"),

		/**
		 * A partition's count marker: for partition 0 the topic's number of partitions.
		 */
		PARTITION_COUNT("partition count", "STRING"),

		/** A change of the topic's number of partitions on its way. */
		PARTITION_CHANGE("partition change", "STRING"),

		/** A rate-limited topic's claims of the last period. */
		RATE_WINDOW("rate window", "ZSET"),

		/**
		 * The priority of each stored message sent with one above 0 (scheduled, ready or
		 * in flight).
		 */
		PRIORITIES("priorities", "HASH"),

		/** The priority of each dead letter that had one above 0. */
		DEAD_PRIORITIES("dead priorities", "HASH"),

		/** Handled ids remembered until the end of their deduplication window. */
		REMEMBERED("remembered", "ZSET"),

		/** The most ids {@link #REMEMBERED} keeps, once the topic deduplicates. */
		DEDUPLICATION("deduplication", "STRING"),

		/** The recurring schedules whose ticks the partition holds. */
		SCHEDULES("schedules", "HASH"),

		/** The registry of recurring schedules under a prefix: name → topic. */
		SCHEDULE_REGISTRY("schedule registry", "HASH"),

		/** Present while the topic's dead letters are listened to. */
		DEAD_LETTERS_WATCH("dead-letters watch", "STRING"),

		/** The marker of the queue's data under a prefix, to tell when Redis lost it. */
		DATASET_MARKER("dataset marker", "STRING"),

		/** The stored messages of the topic's dead-letter queue. */
		DEAD_LETTERS_MESSAGES("dead-letters messages", "HASH"),

		/** The ready list of the topic's dead-letter queue. */
		DEAD_LETTERS_READY("dead-letters ready", "LIST"),

		/** The dead letters of the topic's dead-letter queue. */
		DEAD_LETTERS_DEAD("dead-letters dead", "ZSET"),

		READY_1("ready 1", "LIST"), READY_2("ready 2", "LIST"), READY_3("ready 3", "LIST"), READY_4("ready 4", "LIST"),
		READY_5("ready 5", "LIST"), READY_6("ready 6", "LIST"), READY_7("ready 7", "LIST"), READY_8("ready 8", "LIST"),
		READY_9("ready 9", "LIST");

		private final String headerName;

		private final String type;

		Key(String headerName, String type) {
			this.headerName = headerName;
			this.type = type;
		}

		/**
		 * @return how a script header names this key and its type, e.g.
		 * {@code in-flight ZSET}
		 */
		String header() {
			return this.headerName + " " + this.type;
		}

		/**
		 * @return the ready list of a priority above 0, or {@code 0} for any other key
		 */
		int priority() {
			return (ordinal() >= READY_1.ordinal()) ? ordinal() - READY_1.ordinal() + 1 : 0;
		}

		/**
		 * @return the ready lists of priorities 1 to {@value Script#MAX_PRIORITY}, in
		 * that order
		 */
		static List<Key> priorityReadyLists() {
			return List.of(READY_1, READY_2, READY_3, READY_4, READY_5, READY_6, READY_7, READY_8, READY_9);
		}

	}

}
