package io.github.delayqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.ListenerSettingsProvider;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.awaitility.Awaitility.await;

/**
 * Issue 38's groups on Spring Boot 3.5, configured as on Boot 4: a topic of three
 * partitions whose listener has a group concurrency of 1, strict order and a weighted
 * group; each group's messages are handled one at a time in due order, and a group paused
 * through the {@link DelayQueueGroups} bean waits until it is resumed.
 */
class SpringBoot3GroupsTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withPropertyValues(TestRedis.shared().springProperties())
		.withPropertyValues("delay-queue.key-prefix=boot3-" + UUID.randomUUID().toString().substring(0, 8),
				"delay-queue.topics.webhooks.partitions=3", "delay-queue.topics.webhooks.group-concurrency=1",
				"delay-queue.topics.webhooks.group-order=strict", "delay-queue.topics.webhooks.group-weights.shop-1=3");

	@Test
	void groupsOfAPartitionedTopicRunOneAtATimeInOrderAndAPausedGroupWaits() {
		this.runner.withUserConfiguration(Webhooks.class).run((context) -> {
			assertThat(context.getBean(ListenerSettingsProvider.class).forTopic("webhooks").groupWeights().asMap())
				.containsExactly(entry("shop-1", 3));
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			DelayQueueGroups groups = context.getBean(DelayQueueGroups.class);
			Webhooks webhooks = context.getBean(Webhooks.class);
			List<String> names = IntStream.range(0, 4).mapToObj((g) -> "shop-" + g).toList();
			Instant start = Instant.now();
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				for (String group : names) {
					messages.add(DelayMessage.builder("webhooks", "hook")
						.id(group + "-" + i)
						.group(group)
						.dueAt(start.plusMillis(i))
						.build());
				}
			}
			groups.pause("webhooks", "shop-0");
			queue.sendAll(messages);
			await().atMost(Duration.ofSeconds(20)).until(() -> webhooks.handled.size() == 15);
			assertThat(webhooks.handled).noneMatch((id) -> id.startsWith("shop-0-"));
			assertThat(groups.group("webhooks", "shop-0").ready()).isEqualTo(5);
			assertThat(groups.resume("webhooks", "shop-0")).isTrue();
			await().atMost(Duration.ofSeconds(10)).until(() -> webhooks.handled.size() == 20);
			assertThat(webhooks.mostOfAGroupAtOnce).hasValue(1);
			for (String group : names) {
				assertThat(webhooks.handled.stream().filter((id) -> id.startsWith(group + "-")))
					.containsExactlyElementsOf(IntStream.range(0, 5).mapToObj((i) -> group + "-" + i).toList());
			}
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Webhooks {

		final List<String> handled = new CopyOnWriteArrayList<>();

		final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

		final AtomicInteger mostOfAGroupAtOnce = new AtomicInteger();

		@DelayListener(topic = "webhooks")
		void on(Delivery<String> delivery) throws InterruptedException {
			AtomicInteger inGroup = this.running.computeIfAbsent(String.valueOf(delivery.group()),
					(group) -> new AtomicInteger());
			this.mostOfAGroupAtOnce.accumulateAndGet(inGroup.incrementAndGet(), Math::max);
			// A little work, so that a second message of the group would overlap it.
			Thread.sleep(2);
			this.handled.add(delivery.id());
			inGroup.decrementAndGet();
		}

	}

}
