package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendFailedException;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A topic spread over partitions ({@code delay-queue.topics.<topic>.partitions}): each
 * message lives in the partition of its id, calls by id find it there, calls by topic
 * cover every partition, every partition has its own broker and listener, and all
 * applications of a topic must agree on the count.
 */
class PartitionedTopicTests {

	private static final String TOPIC = "orders";

	private final String prefix = QueueContexts.uniquePrefix();

	private ApplicationContextRunner runner(int partitions) {
		return QueueContexts.runner(this.prefix)
			.withPropertyValues("delay-queue.topics." + TOPIC + ".partitions=" + partitions);
	}

	@Test
	void everyMessageIsDeliveredOnceFromEveryPartition() {
		runner(3).withUserConfiguration(OrderListener.class).run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			OrderListener listener = context.getBean(OrderListener.class);
			List<DelayMessage> messages = IntStream.range(0, 300)
				.mapToObj((i) -> DelayMessage.builder(TOPIC, "order " + i)
					.id("order-" + i)
					.delay(Duration.ofMillis(i % 200))
					.build())
				.toList();
			queue.sendAll(messages);
			await().atMost(Duration.ofSeconds(20)).until(() -> listener.received.size() >= 300);
			await().during(Duration.ofMillis(300)).until(() -> listener.received.size() == 300);
			assertThat(listener.received).doesNotHaveDuplicates();
			assertThat(
					listener.received.stream().map((id) -> TopicPartitions.indexOf(id, 3)).collect(Collectors.toSet()))
				.containsExactlyInAnyOrder(0, 1, 2);
			assertThat(context.getBean(RedisMessageStore.class).stats(TOPIC)).satisfies((stats) -> {
				assertThat(stats.scheduled() + stats.ready() + stats.inFlight() + stats.dead()).isZero();
			});
		});
	}

	@Test
	void pauseAndResumeCoverEveryPartition() {
		runner(3).withUserConfiguration(OrderListener.class).run((context) -> {
			DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
			assertThat(runtime.getListenerStates()).containsExactly(Map.entry(TOPIC, ListenerState.RUNNING));
			assertThat(runtime.pause(TOPIC)).isTrue();
			assertThat(runtime.getListenerStates()).containsEntry(TOPIC, ListenerState.PAUSED);
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			queue.sendAll(IntStream.range(0, 30)
				.mapToObj((i) -> DelayMessage.builder(TOPIC, "order " + i).id("paused-" + i).build())
				.toList());
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> store.stats(TOPIC).ready() == 30);
			assertThat(context.getBean(OrderListener.class).received).isEmpty();

			assertThat(runtime.resume(TOPIC)).isTrue();
			assertThat(runtime.getListenerStates()).containsEntry(TOPIC, ListenerState.RUNNING);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(OrderListener.class).received.size() == 30);
		});
	}

	@Test
	void callsByIdFindTheMessageInItsPartitionAndCallsByTopicCoverThemAll() {
		runner(3).run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			List<SendResult> sent = queue.sendAll(IntStream.range(0, 30)
				.mapToObj((i) -> DelayMessage.builder(TOPIC, "order " + i)
					.id("order-" + i)
					.delay(Duration.ofHours(1))
					.build())
				.toList());
			assertThat(sent).extracting(SendResult::id)
				.containsExactlyElementsOf(IntStream.range(0, 30).mapToObj((i) -> "order-" + i).toList());
			assertThat(sent).noneMatch(SendResult::duplicate);
			for (String partition : store.partitions().names(TOPIC)) {
				assertThat(store.stats(partition).scheduled()).as(partition).isPositive();
			}
			assertThat(store.stats(TOPIC).scheduled()).isEqualTo(30);

			assertThat(queue.send(DelayMessage.builder(TOPIC, "again").id("order-7").build()).duplicate()).isTrue();
			assertThat(queue.cancel(TOPIC, "order-3")).isTrue();
			assertThat(queue.reschedule(TOPIC, "order-4", Duration.ofMinutes(5))).isTrue();
			assertThat(store.inspect(TOPIC, "order-5", 1000)).isNotNull();
			assertThat(store.inspect(TOPIC, "order-3", 1000)).isNull();

			List<String> paged = new ArrayList<>();
			for (int offset = 0; offset < 29; offset += 10) {
				assertThat(store.page(TOPIC, MessageState.SCHEDULED, offset, 10).total()).isEqualTo(29);
				store.page(TOPIC, MessageState.SCHEDULED, offset, 10).messages().forEach((m) -> paged.add(m.id()));
			}
			assertThat(paged).hasSize(29).doesNotHaveDuplicates().doesNotContain("order-3");
			assertThat(store.findTopics(10)).containsExactly(TOPIC);
		});
	}

	@Test
	void noPartitionWaitsForTheBacklogOfAnother() {
		runner(3).withUserConfiguration(SlowOrderListener.class)
			.withPropertyValues("delay-queue.topics." + TOPIC + ".concurrency=1")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				runtime.pause(TOPIC);
				List<String> backlog = idsIn(1, 200, "backlog-");
				List<String> others = idsIn(2, 5, "other-");
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				backlog.forEach((id) -> queue.send(DelayMessage.builder(TOPIC, id).id(id).build()));
				others.forEach((id) -> queue.send(DelayMessage.builder(TOPIC, id).id(id).build()));
				SlowOrderListener listener = context.getBean(SlowOrderListener.class);
				runtime.resume(TOPIC);

				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.containsAll(others));
				long backlogDone = listener.received.stream().filter(backlog::contains).count();
				assertThat(backlogDone).as("backlog messages handled before the other partition was done")
					.isLessThan(100);
			});
	}

	@Test
	void anotherCountFailsWhileTheOldPartitionsHoldMessagesAndIsTakenOnceTheyAreEmpty() {
		List<String> ids = IntStream.range(0, 30).mapToObj((i) -> "order-" + i).toList();
		runner(3).run((context) -> context.getBean(DelayQueueTemplate.class)
			.sendAll(ids.stream()
				.map((id) -> DelayMessage.builder(TOPIC, id).id(id).delay(Duration.ofHours(1)).build())
				.toList()));

		runner(2).withUserConfiguration(OrderListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(PartitionCountException.class)
				.hasMessageStartingWith("Topic 'orders' has 3 partitions in Redis, but 2 are configured here "
						+ "(delay-queue.topics.orders.partitions), and what it holds (")
				.hasMessageContaining("it can change only while the topic is empty");
		});
		QueueContexts.runner(this.prefix).run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			assertThatThrownBy(() -> queue.send(DelayMessage.builder(TOPIC, "x").id("x").build()))
				.isInstanceOf(SendFailedException.class)
				.cause()
				.isInstanceOf(PartitionCountException.class)
				.hasMessageContaining("but 1 are configured here");
		});

		runner(3).run((context) -> ids.forEach((id) -> context.getBean(DelayQueueTemplate.class).cancel(TOPIC, id)));
		runner(2).withUserConfiguration(OrderListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			queue.send(DelayMessage.builder(TOPIC, "after").id("after").build());
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(OrderListener.class).received.contains("after"));
		});
	}

	private static List<String> idsIn(int partition, int count, String prefix) {
		return IntStream.iterate(0, (i) -> i + 1)
			.mapToObj((i) -> prefix + i)
			.filter((id) -> TopicPartitions.indexOf(id, 3) == partition)
			.limit(count)
			.toList();
	}

	@Configuration(proxyBeanMethods = false)
	static class OrderListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = TOPIC)
		void onOrder(Delivery<String> delivery) {
			this.received.add(delivery.id());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SlowOrderListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = TOPIC)
		void onOrder(Delivery<String> delivery) throws InterruptedException {
			Thread.sleep(20);
			this.received.add(delivery.id());
		}

	}

}
