package io.github.delayqueue.store.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.github.delayqueue.store.NewMessage;

import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * One Lua script of the queue: its file's name, the type of its reply and the keys it
 * takes in the order its {@code .lua} header names them. There is one script per state
 * transition (and some that only read, keep a topic's number of partitions, keep
 * recurring schedules, have a partition copy its dead letters or mark the data set), each
 * declared once, in the {@link ScriptCodecs codec} of its calls
 * ({@link ScriptCodecs#signatures()} lists them). Each script is read from the
 * {@code .lua} file beside this class with {@code common.lua} and the helpers it names in
 * front (see {@link ScriptSource}); a {@link ScriptClock} puts its clock and the way
 * signals are sent in front of those. {@code ScriptHeadersTests} checks every declaration
 * against its file's header.
 */
final class Script {

	/** The highest priority; priority 0 messages wait in the ready list itself. */
	static final int MAX_PRIORITY = NewMessage.MAX_PRIORITY;

	private final String fileName;

	private final List<Key> keys;

	private final Reply reply;

	private final String text;

	private Script(String fileName, Reply reply, List<Key> keys) {
		this.fileName = fileName;
		this.keys = keys;
		this.reply = reply;
		this.text = ScriptSource.script(fileName);
	}

	/**
	 * Declares a script.
	 * @param fileName the name of its file, without {@code .lua}
	 * @param reply the type of its reply
	 * @param keys the keys it takes, in order
	 * @return the script
	 */
	static Script of(String fileName, Reply reply, Key... keys) {
		return new Script(fileName, reply, List.of(keys));
	}

	/**
	 * @return the name of the script's file, without {@code .lua}
	 */
	String fileName() {
		return this.fileName;
	}

	/**
	 * @return the keys the script takes, in order
	 */
	List<Key> keys() {
		return this.keys;
	}

	@Override
	public String toString() {
		return this.fileName;
	}

	/**
	 * Builds the script with a prelude and the helpers in front.
	 * @param prelude the Lua text defining {@code now_us()}, {@code now_ms()} and
	 * {@code signal()}
	 * @return the script, ready to run
	 */
	RedisScript<?> withPrelude(String prelude) {
		String source = prelude + this.text;
		return (this.reply == Reply.INTEGER) ? new DefaultRedisScript<>(source, Long.class)
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
	static Key[] withPriorities(Key... own) {
		List<Key> keys = new ArrayList<>(List.of(own));
		keys.add(Key.PRIORITIES);
		keys.addAll(Key.priorityReadyLists());
		return keys.toArray(Key[]::new);
	}

	/**
	 * Keys followed by the dead-letter queue's priorities hash and its ready lists of
	 * priorities 1 to {@value #MAX_PRIORITY}, for the scripts that copy dead letters into
	 * it.
	 */
	static Key[] withDeadLetterPriorities(Key... own) {
		List<Key> keys = new ArrayList<>(List.of(own));
		keys.add(Key.DEAD_LETTERS_PRIORITIES);
		keys.addAll(Key.deadLetterPriorityReadyLists());
		return keys.toArray(Key[]::new);
	}

	/**
	 * Keys followed by the group keys, for the scripts that make messages of groups ready
	 * or claim them: the groups hash, the group ready set, the group counts, the group
	 * tags and the group rotation (so that in Lua, from the groups hash at
	 * {@code KEYS[gbase]}, the others follow in that order).
	 */
	static Key[] withGroups(Key... own) {
		List<Key> keys = new ArrayList<>(List.of(own));
		keys.addAll(List.of(Key.GROUPS, Key.GROUP_READY, Key.GROUP_COUNTS, Key.GROUP_TAGS, Key.GROUP_ROTATION));
		return keys.toArray(Key[]::new);
	}

	/** Keys followed by more keys. */
	static Key[] keys(Key[] keys, Key... more) {
		List<Key> all = new ArrayList<>(List.of(keys));
		all.addAll(List.of(more));
		return all.toArray(Key[]::new);
	}

	/** The type of a script's reply. */
	enum Reply {

		/** An integer. */
		INTEGER,

		/** A list (of integers, strings and nulls, nested or not). */
		LIST

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

		/** The cancel requests that cancelled a message in the last minute. */
		CANCELS("cancels", "ZSET"),

		/** The group of each stored message sent with one. */
		GROUPS("groups", "HASH"),

		/** The ready messages of groups, ordered by group and rank. */
		GROUP_READY("group ready", "ZSET"),

		/** The number of ready messages of each group that has some. */
		GROUP_COUNTS("group counts", "HASH"),

		/** The virtual time, and the finish tag of each group in the rotation. */
		GROUP_TAGS("group tags", "HASH"),

		/**
		 * The groups with ready messages, scored by finish tag ({@code +inf} for a group
		 * parked at its concurrency limit).
		 */
		GROUP_ROTATION("group rotation", "ZSET"),

		/** The messages of each group in flight: its slots taken. */
		GROUP_SLOTS("group slots", "HASH"),

		/**
		 * The paused groups, each scored by when its pause ends ({@code +inf} for a pause
		 * that lasts until it is resumed).
		 */
		GROUP_PAUSES("group pauses", "ZSET"),

		/**
		 * The groups that a per-group rate limit holds to its pace, each scored by when
		 * its next message would be on time (epoch µs).
		 */
		GROUP_RATES("group rates", "ZSET"),

		/**
		 * The strict-order waits: each group whose message waits in it for its next
		 * attempt, and that message ({@code \u0001<id>}), scored by when the wait ends
		 * (epoch ms). A group's pause never ends before its wait.
		 */
		GROUP_WAITS("group waits", "ZSET"),

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

		/** The priorities of the messages of the topic's dead-letter queue. */
		DEAD_LETTERS_PRIORITIES("dead-letters priorities", "HASH"),

		/** The ready lists of priorities 1 to 9 of the topic's dead-letter queue. */
		DEAD_LETTERS_READY_1("dead-letters ready 1", "LIST"), DEAD_LETTERS_READY_2("dead-letters ready 2", "LIST"),
		DEAD_LETTERS_READY_3("dead-letters ready 3", "LIST"), DEAD_LETTERS_READY_4("dead-letters ready 4", "LIST"),
		DEAD_LETTERS_READY_5("dead-letters ready 5", "LIST"), DEAD_LETTERS_READY_6("dead-letters ready 6", "LIST"),
		DEAD_LETTERS_READY_7("dead-letters ready 7", "LIST"), DEAD_LETTERS_READY_8("dead-letters ready 8", "LIST"),
		DEAD_LETTERS_READY_9("dead-letters ready 9", "LIST"),

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

		/**
		 * @return the ready lists of priorities 1 to {@value Script#MAX_PRIORITY} of the
		 * topic's dead-letter queue, in that order
		 */
		static List<Key> deadLetterPriorityReadyLists() {
			return List.of(DEAD_LETTERS_READY_1, DEAD_LETTERS_READY_2, DEAD_LETTERS_READY_3, DEAD_LETTERS_READY_4,
					DEAD_LETTERS_READY_5, DEAD_LETTERS_READY_6, DEAD_LETTERS_READY_7, DEAD_LETTERS_READY_8,
					DEAD_LETTERS_READY_9);
		}

		/**
		 * @return the priority of a ready list of the topic's dead-letter queue above 0,
		 * or {@code 0} for any other key
		 */
		int deadLetterPriority() {
			int index = deadLetterPriorityReadyLists().indexOf(this);
			return (index >= 0) ? index + 1 : 0;
		}

	}

}
