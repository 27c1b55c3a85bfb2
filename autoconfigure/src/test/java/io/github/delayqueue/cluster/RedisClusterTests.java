package io.github.delayqueue.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.autoconfigure.DelayQueueActuatorAutoConfiguration;
import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.metrics.DelayQueueMeterNames;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import io.lettuce.core.cluster.SlotHash;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every feature on a real Redis Cluster of three primaries with a replica each,
 * configured the usual Spring Boot way ({@code spring.data.redis.cluster.nodes}), with
 * topics whose keys live on each of the three primaries: {@code orders} (slot 105),
 * {@code payments} (8507) and {@code reminders} (13139); partitioned topics put a
 * partition on each primary, and a group in its group's partition.
 */
@RedisVersionDependent
@Tag("cluster")
class RedisClusterTests {

	private static final List<String> TOPICS = List.of("orders", "payments", "reminders");

	private static TestRedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary to start a cluster with");
		cluster = TestRedisCluster.start(3, 1, Duration.ofSeconds(2));
	}

	@AfterAll
	static void stopCluster() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void theTopicsUnderTestLiveOnDifferentPrimaries() {
		assertThat(TOPICS.stream().map((topic) -> cluster.primaryOf(SlotHash.getSlot(topic))).distinct()).hasSize(3);
	}

	@Test
	void messagesOfTopicsOnEveryPrimaryAreSentTogetherAndDelivered() {
		runner().run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			List<SendResult> sent = queue.sendAll(TOPICS.stream()
				.flatMap(
						(topic) -> List.of(message(topic, topic + "-1", 0), message(topic, topic + "-2", 200)).stream())
				.toList());
			assertThat(sent).hasSize(6).noneMatch(SendResult::duplicate);
			Listeners listeners = context.getBean(Listeners.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> listeners.delivered.size() == 6);
			assertThat(listeners.delivered).extracting(Delivery::id)
				.containsExactlyInAnyOrder("orders-1", "orders-2", "payments-1", "payments-2", "reminders-1",
						"reminders-2");
		});
	}

	@Test
	void cancelAndRescheduleFindTheirMessageOnItsPrimary() {
		runner().run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			for (String topic : TOPICS) {
				queue.send(message(topic, topic + "-cancelled", 60_000));
				queue.send(message(topic, topic + "-moved", 60_000));
				assertThat(queue.cancel(topic, topic + "-cancelled")).isTrue();
				assertThat(queue.reschedule(topic, topic + "-moved", Duration.ofMillis(100))).isTrue();
			}
			Listeners listeners = context.getBean(Listeners.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> listeners.delivered.size() == 3);
			assertThat(listeners.delivered).extracting(Delivery::id)
				.containsExactlyInAnyOrder("orders-moved", "payments-moved", "reminders-moved");
		});
	}

	@Test
	void failuresAreRetriedAndDeadLetteredOnEveryPrimary() {
		runner().run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			Listeners listeners = context.getBean(Listeners.class);
			for (String topic : TOPICS) {
				listeners.failures.put(topic + "-flaky", 1);
				listeners.failures.put(topic + "-broken", Integer.MAX_VALUE);
				queue.send(message(topic, topic + "-flaky", 0));
				queue.send(message(topic, topic + "-broken", 0));
			}
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> TOPICS.stream().allMatch((topic) -> store.stats(topic).dead() == 1));
			await().atMost(Duration.ofSeconds(10)).until(() -> listeners.delivered.size() == 3);
			for (String topic : TOPICS) {
				assertThat(store.inspect(topic, topic + "-broken", 100).state()).isEqualTo(MessageState.DEAD);
			}
		});
	}

	@Test
	void sendsConfirmedByAReplicaOfEachPrimaryWaitOnEveryNodeTheyWroteTo() {
		runner().withPropertyValues("delay-queue.producer.replication.min-replicas=1").run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			List<SendResult> sent = queue
				.sendAll(TOPICS.stream().map((topic) -> message(topic, topic + "-confirmed", 0)).toList());
			assertThat(sent).hasSize(3).noneMatch(SendResult::duplicate);
			assertThat(queue.send(message("orders", "orders-confirmed-alone", 0)).duplicate()).isFalse();
			Listeners listeners = context.getBean(Listeners.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> listeners.delivered.size() == 4);
		});
	}

	@Test
	void aConfirmedSendAsksEveryNodeItWroteToForItsReplicasBeforeAwaitingAnyOfThem() throws Exception {
		RedisServerProcess ordersPrimary = cluster.primaryOf(SlotHash.getSlot("orders"));
		RedisServerProcess paymentsPrimary = cluster.primaryOf(SlotHash.getSlot("payments"));
		RedisServerProcess ordersReplica = cluster.replicas()
			.stream()
			.filter((replica) -> replica.command("INFO", "replication").contains("master_port:" + ordersPrimary.port()))
			.findFirst()
			.orElseThrow();
		String replicaPid = pid(ordersReplica);
		runner()
			.withPropertyValues("delay-queue.producer.replication.min-replicas=1",
					"delay-queue.producer.replication.timeout=10s")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				queue.sendAll(List.of(message("orders", "orders-first", 60_000),
						message("payments", "payments-first", 60_000)));
				long waits = waitCalls(paymentsPrimary);
				// The replica of orders' primary cannot confirm: the send waits on it.
				signal(replicaPid, "STOP");
				CompletableFuture<List<SendResult>> sent;
				try {
					sent = CompletableFuture.supplyAsync(() -> queue.sendAll(List
						.of(message("orders", "orders-waiting", 60_000), message("payments", "payments-too", 60_000))));
					// Meanwhile payments' primary has run its call and been asked to
					// confirm it: the waits of the nodes overlap instead of adding up.
					await().atMost(Duration.ofMillis(1500))
						.until(() -> waitCalls(paymentsPrimary) > waits
								&& store.inspect("payments", "payments-too", 10) != null);
					assertThat(sent).isNotDone();
				}
				finally {
					signal(replicaPid, "CONT");
				}
				assertThat(sent.get(10, TimeUnit.SECONDS)).hasSize(2).noneMatch(SendResult::duplicate);
			});
	}

	/** How many {@code WAIT} commands a node ran. */
	private static long waitCalls(RedisServerProcess node) {
		return node.command("INFO", "commandstats")
			.lines()
			.filter((line) -> line.startsWith("cmdstat_wait:calls="))
			.map((line) -> Long.parseLong(line.substring("cmdstat_wait:calls=".length()).split(",")[0]))
			.findFirst()
			.orElse(0L);
	}

	private static String pid(RedisServerProcess node) {
		return node.command("INFO", "server")
			.lines()
			.filter((line) -> line.startsWith("process_id:"))
			.map((line) -> line.substring("process_id:".length()).strip())
			.findFirst()
			.orElseThrow();
	}

	/** Sends a signal ("STOP", "CONT") to a process. */
	private static void signal(String pid, String signal) throws Exception {
		assertThat(new ProcessBuilder("kill", "-" + signal, pid).start().waitFor()).isZero();
	}

	@Test
	void topicDiscoveryFindsTheTopicsOfEveryPrimary() {
		runner().run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			for (String topic : List.of("orders", "payments", "reminders", "webhooks", "jobs", "timeouts")) {
				queue.send(message(topic, "later", 60_000));
			}
			assertThat(context.getBean(RedisMessageStore.class).findTopics(100)).containsExactly("jobs", "orders",
					"payments", "reminders", "timeouts", "webhooks");
		});
	}

	@Test
	void wakeUpSignalsStayOnTheNodeOfTheirTopicOnRedis7AndAreBroadcastOnRedis62() {
		boolean redis7 = !cluster.primaries().get(0).version().startsWith("6.");
		// Brokers and listeners sleep 30 s unless a signal wakes them: a delivery within
		// seconds shows the signals arrive.
		runner().withPropertyValues("delay-queue.broker.max-sleep=30s", "delay-queue.listener.idle-check-interval=30s")
			.run((context) -> {
				assertThat(context.getBean(RedisMessageStore.class).shardedSignals()).isEqualTo(redis7);
				Listeners listeners = context.getBean(Listeners.class);
				Thread.sleep(500);
				for (String topic : TOPICS) {
					context.getBean(DelayQueueTemplate.class).send(message(topic, topic + "-signalled", 0));
				}
				await().atMost(Duration.ofSeconds(5)).until(() -> listeners.delivered.size() == 3);
				if (redis7) {
					for (RedisServerProcess node : cluster.primaries()) {
						String stats = node.command("INFO", "commandstats");
						assertThat(stats).contains("cmdstat_spublish").doesNotContain("cmdstat_publish:");
					}
				}
			});
	}

	@Test
	void healthTheOperationsEndpointAndTheGaugesReadTheTopicsOfEveryPrimary() {
		runner()
			.withConfiguration(
					AutoConfigurations.of(MetricsAutoConfiguration.class, DelayQueueActuatorAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("delay-queue.metrics.gauge-refresh-interval=100ms",
					"management.endpoints.web.exposure.include=delayqueue")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				for (String topic : TOPICS) {
					queue.send(message(topic, topic + "-later", 3_600_000));
				}
				Health health = context.getBean(DelayQueueHealthIndicator.class).health();
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails().get("topics")).asString().contains("orders", "payments", "reminders");
				DelayQueueEndpoint.QueueDescriptor described = context.getBean(DelayQueueEndpoint.class).queue();
				assertThat(described.topics()).containsKeys("orders", "payments", "reminders");
				assertThat(described.topics().values()).allSatisfy((topic) -> assertThat(topic.scheduled()).isOne());
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(TOPICS)
						.allSatisfy((topic) -> assertThat(meters.get(DelayQueueMeterNames.MESSAGES)
							.tags("topic", topic, "state", "scheduled")
							.gauge()
							.value()).isOne()));
			});
	}

	@Test
	void aTopicWithThreePartitionsHasOneOnEachPrimaryAndEveryPartitionIsWokenAndServed() {
		runner()
			.withPropertyValues("delay-queue.topics.orders.partitions=3", "delay-queue.broker.max-sleep=30s",
					"delay-queue.listener.idle-check-interval=30s")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				List<String> partitions = store.partitions().names("orders");
				assertThat(partitions.stream().map((name) -> cluster.primaryOf(SlotHash.getSlot(name))).distinct())
					.hasSize(3);
				Listeners listeners = context.getBean(Listeners.class);
				Thread.sleep(500);
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				List<String> ids = IntStream.range(0, 60).mapToObj((i) -> "orders-" + i).toList();
				queue.sendAll(ids.stream().map((id) -> message("orders", id, 3_600_000)).toList());
				for (String partition : partitions) {
					assertThat(store.stats(partition).scheduled()).as(partition).isPositive();
				}
				assertThat(store.stats("orders").scheduled()).isEqualTo(60);
				assertThat(store.findTopics(10)).contains("orders").noneMatch((topic) -> topic.contains("#"));
				for (String id : ids) {
					assertThat(queue.reschedule("orders", id, Duration.ofMillis(50))).isTrue();
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> listeners.delivered.size() == 60);
				assertThat(listeners.delivered).extracting(Delivery::id).containsExactlyInAnyOrderElementsOf(ids);
			});
	}

	@Test
	void groupsOfATopicWithThreePartitionsKeepTheirLimitOrderAndPauseOnEveryPrimary() {
		runner()
			.withPropertyValues("delay-queue.topics.payments.partitions=3",
					"delay-queue.topics.payments.group-concurrency=1")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				DelayQueueGroups groups = context.getBean(DelayQueueGroups.class);
				Listeners listeners = context.getBean(Listeners.class);
				List<String> names = IntStream.range(0, 9).mapToObj((g) -> "shop-" + g).toList();
				assertThat(names.stream()
					.map((group) -> cluster
						.primaryOf(SlotHash.getSlot(store.partitions().nameForGroup("payments", group))))
					.distinct()).as("primaries of the groups' partitions").hasSize(3);
				groups.pause("payments", "shop-0");
				Instant start = Instant.now();
				List<DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < 8; i++) {
					for (String group : names) {
						messages.add(DelayMessage.builder("payments", "p")
							.id(group + "-" + i)
							.group(group)
							.dueAt(start.plusMillis(i))
							.build());
					}
				}
				queue.sendAll(messages);
				queue.send(DelayMessage.builder("payments", "p")
					.id("cancelled")
					.group("shop-1")
					.delay(Duration.ofHours(1))
					.build());
				assertThat(queue.cancel("payments", "cancelled")).as("a cancel by id of a grouped message").isTrue();
				await().atMost(Duration.ofSeconds(20)).until(() -> listeners.delivered.size() == 64);
				assertThat(listeners.delivered).noneMatch((delivery) -> "shop-0".equals(delivery.group()));
				assertThat(groups.group("payments", "shop-0").ready()).isEqualTo(8);
				assertThat(groups.resume("payments", "shop-0")).isTrue();
				await().atMost(Duration.ofSeconds(10)).until(() -> listeners.delivered.size() == 72);
				assertThat(listeners.mostOfAGroupAtOnce).as("most of one group handled at once").hasValue(1);
				for (String group : names) {
					assertThat(listeners.delivered.stream()
						.filter((delivery) -> group.equals(delivery.group()))
						.map(Delivery::id)).as("group %s, in due order", group)
						.containsExactlyElementsOf(IntStream.range(0, 8).mapToObj((i) -> group + "-" + i).toList());
				}
			});
	}

	@Test
	void deadLettersOfEveryPartitionReachTheirListenerAndAScheduleTicksOnItsPrimary() {
		runner().withUserConfiguration(DeadOrders.class)
			.withPropertyValues("delay-queue.topics.orders.partitions=3",
					"delay-queue.topics.orders.backoff.initial-interval=10ms",
					"delay-queue.schedules.beat.topic=reminders", "delay-queue.schedules.beat.fixed-rate=200ms")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				Listeners listeners = context.getBean(Listeners.class);
				List<String> ids = IntStream.range(0, 30).mapToObj((i) -> "doomed-" + i).toList();
				ids.forEach((id) -> listeners.failures.put(id, 10));
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> store.partitions()
						.names("orders")
						.stream()
						.allMatch((partition) -> redis.hasKey(store.keys(partition).deadLettersWatch())));
				context.getBean(DelayQueueTemplate.class)
					.sendAll(ids.stream().map((id) -> message("orders", id, 0)).toList());
				DeadOrders dead = context.getBean(DeadOrders.class);
				await().atMost(Duration.ofSeconds(20)).until(() -> dead.ids.size() >= 30);
				assertThat(dead.ids).containsExactlyInAnyOrderElementsOf(ids);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> listeners.delivered.stream()
						.filter((delivery) -> delivery.id().startsWith("beat~"))
						.count() >= 3);
			});
	}

	private static DelayMessage message(String topic, String id, long delayMillis) {
		return DelayMessage.builder(topic, id).id(id).delay(Duration.ofMillis(delayMillis)).build();
	}

	private static ApplicationContextRunner runner() {
		return QueueContexts.runner(QueueContexts.uniquePrefix(), cluster.springProperties())
			.withUserConfiguration(Listeners.class);
	}

	@Configuration(proxyBeanMethods = false)
	static class DeadOrders {

		final List<String> ids = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders", deadLetters = true)
		void on(Delivery<String> delivery) {
			this.ids.add(delivery.deadLetter().id());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Listeners {

		final List<Delivery<String>> delivered = new CopyOnWriteArrayList<>();

		final Map<String, Integer> failures = new ConcurrentHashMap<>();

		final Map<String, AtomicInteger> runningByGroup = new ConcurrentHashMap<>();

		final AtomicInteger mostOfAGroupAtOnce = new AtomicInteger();

		@DelayListener(topic = "orders", maxAttempts = 2)
		void onOrder(Delivery<String> delivery) {
			handle(delivery);
		}

		@DelayListener(topic = "payments", maxAttempts = 2)
		void onPayment(Delivery<String> delivery) {
			handle(delivery);
		}

		@DelayListener(topic = "reminders", maxAttempts = 2)
		void onReminder(Delivery<String> delivery) {
			handle(delivery);
		}

		private void handle(Delivery<String> delivery) {
			if (delivery.attempt() <= this.failures.getOrDefault(delivery.id(), 0)) {
				throw new IllegalStateException("attempt " + delivery.attempt() + " failed");
			}
			String group = delivery.group();
			if (group == null) {
				this.delivered.add(delivery);
				return;
			}
			AtomicInteger running = this.runningByGroup.computeIfAbsent(group, (name) -> new AtomicInteger());
			this.mostOfAGroupAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
			try {
				// A little work, so that a second message of the group would overlap it.
				Thread.sleep(2);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.delivered.add(delivery);
			running.decrementAndGet();
		}

	}

}
