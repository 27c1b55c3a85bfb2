package io.github.delayqueue.test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.test.DelayQueueTestClock;
import io.github.delayqueue.test.EmbeddedDelayQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test kit with a partitioned topic: {@code @EmbeddedDelayQueue} calls
 * {@link DelayQueueTestClock#clear()} before every test method, the first included, which
 * deletes every message but keeps the topic's count and its partitions' count markers, so
 * that the application, which agreed on 3 partitions when its listener started, goes on
 * sending to them; and groups of the partitioned topic, each in its group's partition,
 * delivered and paused on the test clock.
 */
@SpringBootTest(properties = "delay-queue.topics.clicks.partitions=3")
@EmbeddedDelayQueue
class TestClockPartitionsTests {

	@Autowired
	private DelayQueueTestClock clock;

	@Autowired
	private DelayQueueTemplate queue;

	@Autowired
	private Clicks clicks;

	@Autowired
	private DelayQueueGroups groups;

	@BeforeEach
	void forgetEarlierClicks() {
		this.clicks.received.clear();
	}

	@Test
	void aPartitionedTopicIsDeliveredAfterTheQueueWasClearedForTheNextTest() {
		send("click-a");
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.clicks.received).containsExactly("click-a");
		// What @EmbeddedDelayQueue does before the next test method.
		this.clock.clear();

		send("click-b");
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.clicks.received).containsExactly("click-a", "click-b");
	}

	@Test
	void theGroupsOfAPartitionedTopicAreDeliveredAndPausedOnTheTestClock() {
		this.groups.pause("clicks", "shop-2", Duration.ofMinutes(10));
		List.of("shop-1", "shop-2", "shop-3")
			.forEach((group) -> this.queue.send(DelayMessage.builder("clicks", group)
				.id("click-of-" + group)
				.group(group)
				.delay(Duration.ofSeconds(30))
				.build()));
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.clicks.received).containsExactlyInAnyOrder("click-of-shop-1", "click-of-shop-3");
		DelayQueueAssertions.assertThat(this.clock).topic("clicks").hasPausedGroup("shop-2");
		DelayQueueAssertions.assertThat(this.clock).topic("clicks").message("click-of-shop-2").isInGroup("shop-2");
		this.clock.advance(Duration.ofMinutes(10));
		assertThat(this.clicks.received).contains("click-of-shop-2");
	}

	private void send(String id) {
		this.queue.send(DelayMessage.builder("clicks", id).id(id).delay(Duration.ofSeconds(30)).build());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TestApplication {

		@Bean
		Clicks clicks() {
			return new Clicks();
		}

	}

	static class Clicks {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "clicks")
		void onClick(Delivery<String> delivery) {
			this.received.add(delivery.id());
		}

	}

}
