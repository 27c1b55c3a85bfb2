package io.github.delayqueue.store;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.CRC16;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * How a topic's partitions are named and placed on the slot ring, and which partition a
 * message id belongs to.
 */
class TopicPartitionsTests {

	@Test
	void partitionZeroIsTheTopicItselfSoATopicThatGainsPartitionsKeepsItsKeys() {
		TopicPartitions partitions = TopicPartitions.of(Map.of("orders", 3));
		assertThat(partitions.names("orders")).hasSize(3).first().isEqualTo("orders");
		assertThat(partitions.names("orders").subList(1, 3)).allMatch((name) -> name.startsWith("orders#"));
		assertThat(partitions.names("orders")).doesNotHaveDuplicates();
	}

	@Test
	void aTopicWithoutACountHasOnePartition() {
		TopicPartitions partitions = TopicPartitions.of(Map.of("orders", 3));
		assertThat(partitions.count("emails")).isOne();
		assertThat(partitions.names("emails")).containsExactly("emails");
		assertThat(partitions.nameFor("emails", "any-id")).isEqualTo("emails");
		assertThat(TopicPartitions.NONE.any()).isFalse();
		assertThat(partitions.any()).isTrue();
	}

	@Test
	void partitionsSitEvenlyApartOnTheSlotRing() {
		for (int count : List.of(2, 3, 5, 16)) {
			List<String> names = TopicPartitions.names("payments", count);
			int first = SlotHash.getSlot("payments");
			for (int i = 1; i < count; i++) {
				int target = first + SlotHash.SLOT_COUNT * i / count;
				int distance = Math.floorMod(SlotHash.getSlot(names.get(i)) - target, SlotHash.SLOT_COUNT);
				assertThat(distance).as("partition %d of %d", i, count).isLessThan(SlotHash.SLOT_COUNT / (count * 16));
			}
		}
	}

	@Test
	void theNamesDependOnlyOnTheTopicAndTheCount() {
		assertThat(TopicPartitions.names("orders", 4)).isEqualTo(TopicPartitions.names("orders", 4));
		assertThat(TopicPartitions.of(Map.of("orders", 4)).names("orders"))
			.isEqualTo(TopicPartitions.names("orders", 4));
	}

	@Test
	void idsSpreadEvenlyAndAlwaysGoToTheSamePartition() {
		TopicPartitions partitions = TopicPartitions.of(Map.of("orders", 3));
		int[] perPartition = new int[3];
		IntStream.range(0, 3000).mapToObj((i) -> "order-" + i).forEach((id) -> {
			perPartition[TopicPartitions.indexOf(id, 3)]++;
			assertThat(partitions.nameFor("orders", id))
				.isEqualTo(partitions.names("orders").get(TopicPartitions.indexOf(id, 3)));
		});
		assertThat(IntStream.of(perPartition).boxed().toList())
			.allSatisfy((count) -> assertThat(count).isBetween(850, 1150));
	}

	@Test
	void theNamesOfEarlierDeadLettersOfAnIdFallInThePartitionOfTheId() {
		for (String id : List.of("order-1", "a~b", "~", "x", "order~7", "order~7~~", "a~1~2")) {
			int partition = TopicPartitions.indexOf(id, 7);
			assertThat(TopicPartitions.indexOf(id + "~1764000000000", 7)).as(id).isEqualTo(partition);
			assertThat(TopicPartitions.indexOf(id + "~1764000000000~~", 7)).as(id).isEqualTo(partition);
		}
		assertThat(TopicPartitions.indexOf("~17", 7)).isEqualTo(CRC16.crc16("~17".getBytes()) % 7);
		assertThat(TopicPartitions.indexOf("order~", 7)).isEqualTo(CRC16.crc16("order~".getBytes()) % 7);
		assertThat(TopicPartitions.indexOf("order-17", 7)).isEqualTo(CRC16.crc16("order-17".getBytes()) % 7);
	}

	@Test
	void thePartitionOfANameBelongsToItsTopic() {
		assertThat(TopicPartitions.topicOf("orders#17")).isEqualTo("orders");
		assertThat(TopicPartitions.topicOf("orders")).isEqualTo("orders");
	}

	@Test
	void aCountOutOfRangeIsRefusedNamingTheTopic() {
		assertThatIllegalArgumentException().isThrownBy(() -> TopicPartitions.of(Map.of("orders", 0)))
			.withMessage("Topic 'orders' must have 1 to 128 partitions, but has 0");
		assertThatIllegalArgumentException().isThrownBy(() -> TopicPartitions.of(Map.of("orders", 129)))
			.withMessageContaining("but has 129");
	}

}
