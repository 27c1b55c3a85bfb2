package io.github.delayqueue.store.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.TopicPartitions;

import org.springframework.data.redis.connection.DataType;

/**
 * The Redis keys of one topic. Every key shares the hash tag {@code {topic}}, so all of a
 * topic's keys live in one Redis Cluster slot and every script touches a single slot. The
 * keys of a dead-letter queue {@code <topic>#dead} are the topic's, in its slot, with
 * {@code x:} in front of their suffix; its count marker and count change are the topic's
 * own.
 *
 * @param prefix the configured key prefix
 * @param topic the topic, a partition of one, or (a partition of) a dead-letter queue
 */
public record TopicKeys(String prefix, String topic) {

	/** What the keys of a dead-letter queue have in front of their suffix. */
	private static final String DEAD_LETTERS_NAMESPACE = "x:";

	/**
	 * @return HASH id → stored message, for scheduled, ready and in-flight messages
	 */
	public String messages() {
		return key("m");
	}

	/**
	 * @return ZSET of scheduled ids scored by due time (epoch ms)
	 */
	public String scheduled() {
		return key("z");
	}

	/**
	 * @return LIST of ready ids, oldest first
	 */
	public String ready() {
		return key("r");
	}

	/**
	 * The ready list of a priority: {@link #ready()} for priority 0.
	 * @param priority the priority, 0 to 9
	 * @return LIST of ready ids of that priority, oldest first
	 */
	public String ready(int priority) {
		return (priority == 0) ? ready() : key("r:" + priority);
	}

	/**
	 * @return HASH id → priority, for the stored (scheduled, ready and in-flight)
	 * messages sent with a priority above 0, until they are acknowledged, cancelled or
	 * dead-lettered
	 */
	public String priorities() {
		return key("p");
	}

	/**
	 * @return HASH id (or buried name) → priority, for the dead-lettered messages that
	 * had a priority above 0, until they are replayed or purged; kept apart from
	 * {@link #priorities()} so that a new message of a dead letter's id never shares its
	 * entry
	 */
	public String deadPriorities() {
		return key("dp");
	}

	/**
	 * @return ZSET of in-flight ids scored by lease deadline (epoch ms)
	 */
	public String inFlight() {
		return key("i");
	}

	/**
	 * @return HASH id → lease token of the claim that holds it, for in-flight messages
	 */
	public String leases() {
		return key("l");
	}

	/**
	 * The record of one consumer's last claim, kept as long as its lease, so that a claim
	 * request sent again (the client lost the reply) returns what the first one leased.
	 * @param consumer the consumer's id
	 * @return STRING key
	 */
	public String claimRecord(String consumer) {
		return key("c:" + consumer);
	}

	/**
	 * @return ZSET of dead-lettered ids scored by the time they died (epoch ms)
	 */
	public String dead() {
		return key("d");
	}

	/**
	 * @return HASH id → stored message, for dead-lettered messages
	 */
	public String deadMessages() {
		return key("dm");
	}

	/**
	 * @return HASH id → last error, for dead-lettered messages
	 */
	public String deadErrors() {
		return key("de");
	}

	/**
	 * The count marker: for a topic (partition 0), the number of partitions it has,
	 * absent for 1; for a partition above 0, the count of the change that last marked it,
	 * {@code "<count>"} or {@code "<count>:<change token>"}. Calls that store or find
	 * messages by id are refused by a partition whose marker has another count than the
	 * caller's.
	 * @return STRING key
	 */
	public String partitionCount() {
		return TopicPartitions.isDeadLetters(this.topic) ? source().partitionCount() : key("n");
	}

	/**
	 * @return STRING: a change of the topic's number of partitions on its way,
	 * {@code "<token>:<new count>"}, expiring on its own (only partition 0's is used)
	 */
	public String partitionChange() {
		return TopicPartitions.isDeadLetters(this.topic) ? source().partitionChange() : key("nc");
	}

	/**
	 * The recurring schedules whose ticks this partition holds (a schedule's ticks, ids
	 * {@code <name>~<tick ms>}, belong to the partition of its name): name →
	 * {@code <next tick ms>:<paused 0 or 1>:<definition>}.
	 * @return HASH key
	 */
	public String schedules() {
		return key("sc");
	}

	/**
	 * The keys of this topic's dead-letter queue, in its slot.
	 * @return the keys of {@code <topic>#dead}
	 */
	public TopicKeys deadLetters() {
		return new TopicKeys(this.prefix, TopicPartitions.deadLettersOf(this.topic));
	}

	/**
	 * Present while a listener of the topic's dead letters has started once: from then on
	 * every dead letter is copied into the dead-letter queue ({@link #deadLetters()}) as
	 * it dies. Never expires; deleting it stops the copies.
	 * @return STRING key
	 */
	public String deadLettersWatch() {
		return key("xw");
	}

	/**
	 * The sliding window of a rate-limited topic: one entry per message claimed within
	 * the last period, scored by its claim time (epoch µs); absent for a topic without a
	 * rate limit, and expiring a period after its last claim.
	 * @return ZSET key
	 */
	public String rateWindow() {
		return key("w");
	}

	/**
	 * The ids of handled messages that were sent with a deduplication window, scored by
	 * the end of their window (epoch ms): a send of such an id stores nothing until then,
	 * nor does a replay of a dead letter of it. Absent while the topic never had such a
	 * message acknowledged, and expires when its last window ends.
	 * @return ZSET key
	 */
	public String remembered() {
		return key("rm");
	}

	/**
	 * The most ids {@link #remembered()} keeps: the largest bound any send with a
	 * deduplication window asked for; absent before the first, and then acknowledging
	 * reads nothing more.
	 * @return STRING key
	 */
	public String deduplication() {
		return key("dd");
	}

	/**
	 * The tokens of the cancel requests that cancelled a message, scored by when they may
	 * be forgotten (a minute on, epoch ms; forgotten only while there are 100 or more):
	 * the same request sent again (the client lost its reply) reports the message
	 * cancelled, and cancels nothing else. Absent once nothing was cancelled for a
	 * minute.
	 * @return ZSET key
	 */
	public String cancels() {
		return key("kc");
	}

	/**
	 * @return HASH id → group, for the stored (scheduled, ready and in-flight) messages
	 * sent with a group, until they are acknowledged, cancelled or dead-lettered (a dead
	 * letter keeps its group in its body's header, and a replay puts it back)
	 */
	public String groups() {
		return key("g");
	}

	/**
	 * @return ZSET of the ready messages of groups, all scored 0, each member
	 * {@code <group>\0<rank>\0<id>} (rank: 9 minus the priority, then the due time in 13
	 * digits), so that a group's most urgent message comes first
	 */
	public String groupReady() {
		return key("gq");
	}

	/**
	 * @return HASH group → its members in {@link #groupReady()}, for the groups that have
	 * some
	 */
	public String groupCounts() {
		return key("gn");
	}

	/**
	 * @return HASH of the claim rotation's finish tags: {@code \u0001V} → the topic's
	 * virtual time, each group in the rotation → its tag, {@code ""} → the tag of the
	 * messages of no group
	 */
	public String groupTags() {
		return key("gv");
	}

	/**
	 * @return ZSET of the groups with ready messages, scored by finish tag: claims serve
	 * the lowest first
	 */
	public String groupRotation() {
		return key("ga");
	}

	/**
	 * @return HASH of each group's messages in flight (its slots taken), for the group
	 * concurrency limit
	 */
	public String groupSlots() {
		return key("gf");
	}

	/**
	 * @return ZSET of the paused groups, each scored by when its pause ends (epoch ms;
	 * {@code +inf} for a pause that lasts until it is resumed): claims pass their ready
	 * messages over
	 */
	public String groupPauses() {
		return key("gp");
	}

	/**
	 * @return ZSET of the groups a per-group rate limit paces, each scored by when its
	 * next message would be on time (epoch µs; an entry past is worth none and is removed
	 * by the next claim)
	 */
	public String groupRates() {
		return key("gr");
	}

	/**
	 * @return ZSET of the strict-order waits: each group whose message waits in it for
	 * its next attempt ({@code group-order: strict}), and that message
	 * ({@code \u0001<id>}), scored by when the wait ends (epoch ms): an operator's pause
	 * or resume of the group never ends the group's pause before it (entries past are
	 * worth nothing and leave with the next strict-order retry)
	 */
	public String groupWaits() {
		return key("gw");
	}

	/**
	 * The key that plays a role in the scripts.
	 * @param role the role
	 * @return the key
	 * @throws IllegalArgumentException for a role whose key depends on more than the
	 * topic
	 */
	String key(Script.Key role) {
		return switch (role) {
			case MESSAGES -> messages();
			case SCHEDULED -> scheduled();
			case READY -> ready();
			case IN_FLIGHT -> inFlight();
			case LEASES -> leases();
			case DEAD -> dead();
			case DEAD_MESSAGES -> deadMessages();
			case DEAD_ERRORS -> deadErrors();
			case PARTITION_COUNT -> partitionCount();
			case PARTITION_CHANGE -> partitionChange();
			case PRIORITIES -> priorities();
			case DEAD_PRIORITIES -> deadPriorities();
			case READY_1, READY_2, READY_3, READY_4, READY_5, READY_6, READY_7, READY_8, READY_9 ->
				ready(role.priority());
			case RATE_WINDOW -> rateWindow();
			case REMEMBERED -> remembered();
			case DEDUPLICATION -> deduplication();
			case CANCELS -> cancels();
			case GROUPS -> groups();
			case GROUP_READY -> groupReady();
			case GROUP_COUNTS -> groupCounts();
			case GROUP_TAGS -> groupTags();
			case GROUP_ROTATION -> groupRotation();
			case GROUP_SLOTS -> groupSlots();
			case GROUP_PAUSES -> groupPauses();
			case GROUP_RATES -> groupRates();
			case GROUP_WAITS -> groupWaits();
			case SCHEDULES -> schedules();
			case DEAD_LETTERS_WATCH -> deadLettersWatch();
			case DEAD_LETTERS_MESSAGES -> deadLetters().messages();
			case DEAD_LETTERS_READY -> deadLetters().ready();
			case DEAD_LETTERS_DEAD -> deadLetters().dead();
			case DEAD_LETTERS_PRIORITIES -> deadLetters().priorities();
			case DEAD_LETTERS_READY_1, DEAD_LETTERS_READY_2, DEAD_LETTERS_READY_3, DEAD_LETTERS_READY_4,
					DEAD_LETTERS_READY_5, DEAD_LETTERS_READY_6, DEAD_LETTERS_READY_7, DEAD_LETTERS_READY_8,
					DEAD_LETTERS_READY_9 ->
				deadLetters().ready(role.deadLetterPriority());
			case CLAIM_RECORD, STATE_INDEX, STATE_MESSAGES, SCHEDULE_REGISTRY, DATASET_MARKER ->
				throw new IllegalArgumentException("The " + role + " key depends on more than the topic");
		};
	}

	/**
	 * @return every key of the topic
	 */
	public List<String> all() {
		return List.copyOf(types().keySet());
	}

	/**
	 * @return every key of the topic with its Redis type, and the keys of its dead-letter
	 * queue that its scripts write
	 */
	public Map<String, DataType> types() {
		Map<String, DataType> types = new LinkedHashMap<>();
		types.put(messages(), DataType.HASH);
		types.put(scheduled(), DataType.ZSET);
		types.put(ready(), DataType.LIST);
		types.put(inFlight(), DataType.ZSET);
		types.put(leases(), DataType.HASH);
		types.put(dead(), DataType.ZSET);
		types.put(deadMessages(), DataType.HASH);
		types.put(deadErrors(), DataType.HASH);
		types.put(deadPriorities(), DataType.HASH);
		types.put(priorities(), DataType.HASH);
		types.put(remembered(), DataType.ZSET);
		types.put(deduplication(), DataType.STRING);
		types.put(cancels(), DataType.ZSET);
		types.put(groups(), DataType.HASH);
		types.put(groupReady(), DataType.ZSET);
		types.put(groupCounts(), DataType.HASH);
		types.put(groupTags(), DataType.HASH);
		types.put(groupRotation(), DataType.ZSET);
		types.put(groupSlots(), DataType.HASH);
		types.put(groupPauses(), DataType.ZSET);
		types.put(groupRates(), DataType.ZSET);
		types.put(groupWaits(), DataType.ZSET);
		types.put(schedules(), DataType.HASH);
		// Read by every call by id: of another type, it would fail them all.
		types.put(partitionCount(), DataType.STRING);
		for (int priority = 1; priority <= Script.MAX_PRIORITY; priority++) {
			types.put(ready(priority), DataType.LIST);
		}
		// Written when a message dies while the topic's dead letters are listened to.
		types.put(deadLetters().messages(), DataType.HASH);
		types.put(deadLetters().ready(), DataType.LIST);
		types.put(deadLetters().priorities(), DataType.HASH);
		for (int priority = 1; priority <= Script.MAX_PRIORITY; priority++) {
			types.put(deadLetters().ready(priority), DataType.LIST);
		}
		return types;
	}

	/**
	 * The pub/sub channel on which scripts publish wake-up signals for all topics under a
	 * prefix.
	 * @param prefix the configured key prefix
	 * @return the channel name
	 */
	public static String signalChannel(String prefix) {
		return prefix + ":signal";
	}

	/**
	 * The registry of recurring schedules under a prefix: name → topic, for the instances
	 * that poll them; read and written by its own script, in its own slot.
	 * @param prefix the configured key prefix
	 * @return HASH key
	 */
	public static String scheduleRegistry(String prefix) {
		return prefix + ":schedules";
	}

	/**
	 * The marker of the queue's data under a prefix: written once, read by every instance
	 * every few seconds; gone or replaced, Redis lost the queue's data.
	 * @param prefix the configured key prefix
	 * @return STRING key
	 */
	public static String datasetMarker(String prefix) {
		return prefix + ":dataset";
	}

	/**
	 * The channel of a topic's sharded wake-up signals ({@code SPUBLISH}): in the topic's
	 * hash slot.
	 * @param prefix the configured key prefix
	 * @param topic the topic
	 * @return the channel name
	 */
	public static String shardedSignalChannel(String prefix, String topic) {
		return new TopicKeys(prefix, topic).key("s");
	}

	private String key(String suffix) {
		String tag = this.topic;
		StringBuilder namespace = new StringBuilder();
		while (TopicPartitions.isDeadLetters(tag)) {
			tag = tag.substring(0, tag.length() - TopicPartitions.DEAD_LETTERS.length());
			namespace.append(DEAD_LETTERS_NAMESPACE);
		}
		return this.prefix + ":{" + tag + "}:" + namespace + suffix;
	}

	/** The keys of the topic whose dead letters this dead-letter queue holds. */
	private TopicKeys source() {
		return new TopicKeys(this.prefix,
				this.topic.substring(0, this.topic.length() - TopicPartitions.DEAD_LETTERS.length()));
	}

}
