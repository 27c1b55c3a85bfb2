package io.github.delayqueue.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.CRC16;

/**
 * How topics are spread over partitions, each partition a topic of its own in Redis with
 * its own hash slot. Partition 0 of a topic is the topic itself, so a topic that gains
 * partitions keeps its keys. Partition {@code i > 0} is the topic {@code <topic>#<n>},
 * whose number {@code n} is the first that puts it {@code i / count} of the slot ring
 * after partition 0: the partitions of a topic sit evenly apart on the ring, and so fall
 * on different nodes of a Redis Cluster whose nodes hold equal ranges of slots. A message
 * belongs to partition {@code CRC16(id) mod count}, so every call that names a message by
 * id finds it in one partition; a message of a group to partition
 * {@code CRC16(group) mod count} ({@link #nameForGroup}), where the group's limit, order
 * and pause hold, and a call by id that does not find it in its id's partition asks the
 * others.
 *
 * <p>
 * The dead-letter queue of a topic ({@link #deadLettersOf(String)}, {@code <topic>#dead})
 * is spread the same way, under the topic's count: its partition {@code i} is partition
 * {@code i} of the topic followed by {@value #DEAD_LETTERS}, kept in that partition's
 * hash slot. Immutable.
 */
public final class TopicPartitions {

	/** Most partitions of one topic. */
	public static final int MAX_PARTITIONS = 128;

	/** Separates a topic from the number of one of its partitions. */
	public static final char SEPARATOR = '#';

	/** Ends the name of a topic's dead-letter queue, and of each of its partitions. */
	public static final String DEAD_LETTERS = SEPARATOR + "dead";

	/** Separates an id from the time of death in the name of an earlier dead letter. */
	private static final char BURIED = '~';

	/** No topic has more than one partition. */
	public static final TopicPartitions NONE = new TopicPartitions(Map.of());

	private static final int SLOTS = SlotHash.SLOT_COUNT;

	/**
	 * How finely a partition is placed: within a sixteenth of the distance between two
	 * partitions.
	 */
	private static final int PLACEMENT_PRECISION = 16;

	private final Map<String, Integer> counts;

	private final Map<String, List<String>> names = new ConcurrentHashMap<>();

	private TopicPartitions(Map<String, Integer> counts) {
		this.counts = counts;
	}

	/**
	 * Partitions of the given topics; other topics have one.
	 * @param counts the number of partitions of each topic
	 * @return the partitions
	 * @throws IllegalArgumentException for a count under 1 or over
	 * {@value #MAX_PARTITIONS}
	 */
	public static TopicPartitions of(Map<String, Integer> counts) {
		counts.forEach(TopicPartitions::requireValidCount);
		return new TopicPartitions(Map.copyOf(counts));
	}

	/**
	 * @param topic a topic
	 * @return its number of partitions, 1 unless configured
	 */
	public int count(String topic) {
		return this.counts.getOrDefault(topicOf(topic), 1);
	}

	/**
	 * @return whether some topic has more than one partition
	 */
	public boolean any() {
		return this.counts.values().stream().anyMatch((count) -> count > 1);
	}

	/**
	 * The names of a topic's partitions in Redis.
	 * @param topic a topic
	 * @return the names, partition 0 (the topic itself) first
	 */
	public List<String> names(String topic) {
		int count = count(topic);
		if (count == 1) {
			return List.of(topic);
		}
		return this.names.computeIfAbsent(topic, (t) -> isDeadLetters(t)
				? names(topicOf(t), count).stream().map(TopicPartitions::deadLettersOf).toList() : names(t, count));
	}

	/**
	 * The partition that holds a message.
	 * @param topic the topic
	 * @param id the message id
	 * @return the name in Redis of the partition
	 */
	public String nameFor(String topic, String id) {
		int count = count(topic);
		return (count == 1) ? topic : names(topic).get(indexOf(id, count));
	}

	/**
	 * The partition that holds the messages of a group: {@code CRC16(group) mod count},
	 * so that a group's concurrency limit, order and pause hold in one partition.
	 * @param topic the topic
	 * @param group the group's name
	 * @return the name in Redis of the partition
	 */
	public String nameForGroup(String topic, String group) {
		int count = count(topic);
		return (count == 1) ? topic : names(topic).get(CRC16.crc16(group.getBytes(StandardCharsets.UTF_8)) % count);
	}

	/**
	 * The partition a new message goes to: its group's, else its id's.
	 * @param topic the topic
	 * @param message the message
	 * @return the name in Redis of the partition
	 */
	public String nameFor(String topic, NewMessage message) {
		String group = message.group();
		return (group != null) ? nameForGroup(topic, group) : nameFor(topic, message.id());
	}

	/**
	 * The names of the partitions of a topic with a given number of them.
	 * @param topic a topic
	 * @param count its number of partitions
	 * @return the names, partition 0 (the topic itself) first
	 */
	public static List<String> names(String topic, int count) {
		requireValidCount(topic, count);
		List<String> names = new ArrayList<>(count);
		names.add(topic);
		Set<Integer> used = new HashSet<>();
		int first = SlotHash.getSlot(topic);
		int window = Math.max(1, SLOTS / (count * PLACEMENT_PRECISION));
		for (int i = 1; i < count; i++) {
			int target = first + (int) ((long) SLOTS * i / count);
			int number = 1;
			while (used.contains(number) || Math.floorMod(slotOf(topic, number) - target, SLOTS) >= window) {
				number++;
			}
			used.add(number);
			names.add(topic + SEPARATOR + number);
		}
		return List.copyOf(names);
	}

	/**
	 * The partition of a message id: {@code CRC16(id) mod count}, where an id that ends
	 * in {@code ~<digits>}, then any number of {@code ~}, counts without that end, and
	 * without the ends of that kind before it. So the names
	 * {@code <id>~<time it died>~...} under which earlier dead letters of an id are kept
	 * fall in the partition of the id, where they are, whatever the id ends in.
	 * @param id the message id
	 * @param count the number of partitions
	 * @return the partition's index, 0 to {@code count - 1}
	 */
	public static int indexOf(String id, int count) {
		return CRC16.crc16(routingPart(id).getBytes(StandardCharsets.UTF_8)) % count;
	}

	/** The id without its ends of {@code ~<digits>~*}, one after another. */
	private static String routingPart(String id) {
		int end = id.length();
		while (true) {
			int digitsEnd = end;
			while (digitsEnd > 0 && id.charAt(digitsEnd - 1) == BURIED) {
				digitsEnd--;
			}
			int digits = digitsEnd;
			while (digits > 0 && id.charAt(digits - 1) >= '0' && id.charAt(digits - 1) <= '9') {
				digits--;
			}
			if (digits == digitsEnd || digits < 2 || id.charAt(digits - 1) != BURIED) {
				return id.substring(0, end);
			}
			end = digits - 1;
		}
	}

	/**
	 * The dead-letter queue of a topic, or of one of its partitions: where its dead
	 * letters wait for a listener of them, in the same hash slot.
	 * @param name a topic, or the name of a partition in Redis
	 * @return {@code <name>#dead}
	 */
	public static String deadLettersOf(String name) {
		return name + DEAD_LETTERS;
	}

	/**
	 * @param name a topic, or the name of a partition in Redis
	 * @return whether it is (a partition of) a topic's dead-letter queue
	 */
	public static boolean isDeadLetters(String name) {
		return name.endsWith(DEAD_LETTERS);
	}

	/**
	 * The topic a partition belongs to, whose number of partitions it shares: for a
	 * partition of a dead-letter queue, the topic whose dead letters it holds.
	 * @param name the name of a partition in Redis, or of a topic
	 * @return the topic
	 */
	public static String topicOf(String name) {
		int separator = name.indexOf(SEPARATOR);
		return (separator < 0) ? name : name.substring(0, separator);
	}

	private static int slotOf(String topic, int number) {
		return SlotHash.getSlot(topic + SEPARATOR + number);
	}

	private static void requireValidCount(String topic, int count) {
		if (count < 1 || count > MAX_PARTITIONS) {
			throw new IllegalArgumentException(
					"Topic '" + topic + "' must have 1 to " + MAX_PARTITIONS + " partitions, but has " + count);
		}
	}

}
