package io.github.delayqueue.test;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static io.github.delayqueue.test.DelayQueueAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The final review of groups on the test clock: a topic with
 * {@code group-concurrency: 1}, {@code group-order: strict} and a per-group rate limit of
 * one a minute, whose group an operator pauses and resumes while a message of it waits
 * for its retry. Attacks whether {@code advance} steps at each of the three ends (the
 * strict wait's, the operator's pause's, the pace's) and never delivers a message of the
 * group before the latest of them, nor two at once, nor out of order.
 */
@SpringBootTest(properties = { "delay-queue.topics.orders.group-concurrency=1",
		"delay-queue.topics.orders.group-order=strict", "delay-queue.topics.orders.group-rate-limit.limit=1",
		"delay-queue.topics.orders.group-rate-limit.period=1m", "delay-queue.topics.orders.backoff.initial-interval=5m",
		"delay-queue.topics.orders.backoff.multiplier=1", "delay-queue.topics.orders.backoff.max-interval=5m",
		"delay-queue.topics.orders.max-attempts=5" })
@EmbeddedDelayQueue
class GroupsFinalKitReviewTests {

	@Autowired
	DelayQueueTemplate template;

	@Autowired
	DelayQueueTestClock clock;

	@Autowired
	DelayQueueGroups groups;

	@Autowired
	Orders orders;

	@BeforeEach
	void forgetEarlierDeliveries() {
		this.orders.handled.clear();
	}

	/**
	 * a-1 fails at once and waits 5 minutes in its group; the operator pauses the group
	 * for 10 minutes 30 seconds in: the group waits until 10m30s (the later end), then
	 * a-1 is delivered again, and a-2 and a-3 follow a minute apart each (the pace); the
	 * other group goes on meanwhile.
	 */
	@Test
	void anOperatorsLongerPauseOverAStrictWaitThenThePaceDecideWhenTheGroupGoesOn() {
		Instant start = this.clock.now();
		sendSteps("a");
		this.template.send(DelayMessage.builder("orders", "x").id("x-1").group("other").build());
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(this.orders.handled.keySet()).containsExactlyInAnyOrder("a-1#1", "x-1#1");
		assertThat(this.clock).topic("orders")
			.hasPausedGroup("a")
			.hasReadyCountInGroup("a", 3)
			.hasReadyCountInGroup("other", 0);
		this.groups.pause("orders", "a", Duration.ofMinutes(10));
		this.clock.advance(Duration.ofMinutes(6));
		assertThat(this.orders.handled.keySet()).as("the strict wait ended, the operator's pause holds")
			.containsExactlyInAnyOrder("a-1#1", "x-1#1");
		assertThat(this.clock).topic("orders").hasPausedGroup("a");
		this.clock.advance(Duration.ofMinutes(4).plusSeconds(45));
		assertThat(this.orders.handled.keySet()).as("10m45s in: a-1 again, a-2 waits for its pace")
			.containsExactlyInAnyOrder("a-1#1", "x-1#1", "a-1#2");
		assertThat(deliveriesOf("a")).containsExactly("a-1#1", "a-1#2");
		assertThat(this.clock).topic("orders").hasPausedGroup("a").hasReadyCountInGroup("a", 2);
		this.clock.advance(Duration.ofMinutes(2).plusSeconds(15));
		assertThat(this.orders.handled.keySet()).containsExactlyInAnyOrder("a-1#1", "x-1#1", "a-1#2", "a-2#1", "a-3#1");
		assertThat(deliveriesOf("a")).containsExactly("a-1#1", "a-1#2", "a-2#1", "a-3#1");
		Instant second = this.orders.handled.get("a-1#2");
		assertThat(Duration.between(start, second)).as("after the operator's pause")
			.isGreaterThanOrEqualTo(Duration.ofSeconds(630));
		assertThat(Duration.between(second, this.orders.handled.get("a-2#1"))).as("a pace after a-1")
			.isGreaterThanOrEqualTo(Duration.ofMinutes(1));
		assertThat(Duration.between(this.orders.handled.get("a-2#1"), this.orders.handled.get("a-3#1")))
			.as("a pace after a-2")
			.isGreaterThanOrEqualTo(Duration.ofMinutes(1));
		assertThat(this.orders.mostAtOnce).isEqualTo(1);
		assertThat(this.clock).topic("orders").isEmpty();
	}

	/**
	 * b-1 fails and waits 5 minutes; the operator pauses the group for 2 minutes
	 * (shorter: the pause ends with the wait) and resumes it a minute in: the group stays
	 * paused until the wait's end, b-1 comes at 5 minutes, not before, and the rest at
	 * their pace.
	 */
	@Test
	void aResumeDuringAStrictWaitOnTheTestClockLetsNothingPassBeforeTheWaitsEnd() {
		Instant start = this.clock.now();
		sendSteps("b");
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(this.orders.handled.keySet()).containsExactly("b-1#1");
		Instant pauseEnd = this.groups.pause("orders", "b", Duration.ofMinutes(2));
		assertThat(Duration.between(start, pauseEnd)).as("the pause ends with the strict wait")
			.isGreaterThanOrEqualTo(Duration.ofMinutes(5));
		this.clock.advance(Duration.ofSeconds(30));
		this.groups.resume("orders", "b");
		assertThat(this.clock).topic("orders").hasPausedGroup("b");
		this.clock.advance(Duration.ofMinutes(3).plusSeconds(50));
		assertThat(this.orders.handled.keySet()).as("4m50s in").containsExactly("b-1#1");
		this.clock.advance(Duration.ofMinutes(3));
		assertThat(this.orders.handled.keySet()).containsExactly("b-1#1", "b-1#2", "b-2#1", "b-3#1");
		assertThat(Duration.between(start, this.orders.handled.get("b-1#2")))
			.isGreaterThanOrEqualTo(Duration.ofMinutes(5));
		assertThat(Duration.between(this.orders.handled.get("b-1#2"), this.orders.handled.get("b-2#1")))
			.isGreaterThanOrEqualTo(Duration.ofMinutes(1));
		assertThat(this.clock).topic("orders").isEmpty();
	}

	/**
	 * The deliveries of one group's messages, in the order handled (those of two groups
	 * may be handled at once, in either order).
	 */
	private List<String> deliveriesOf(String group) {
		synchronized (this.orders.handled) {
			return this.orders.handled.keySet()
				.stream()
				.filter((delivery) -> delivery.startsWith(group + "-"))
				.toList();
		}
	}

	private void sendSteps(String group) {
		for (int step = 1; step <= 3; step++) {
			this.template.send(DelayMessage.builder("orders", "step " + step)
				.id(group + "-" + step)
				.group(group)
				.delay(Duration.ofMillis(step))
				.build());
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Config {

		@Bean
		Orders orders(ObjectProvider<DelayQueueTestClock> clock) {
			return new Orders(clock);
		}

	}

	static class Orders {

		/**
		 * Each delivery, "<id>#<attempt>", in order, with the time on the test clock
		 * then.
		 */
		final Map<String, Instant> handled = Collections.synchronizedMap(new LinkedHashMap<>());

		private final ObjectProvider<DelayQueueTestClock> clock;

		/** Messages of each group in the handler now. */
		private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

		/** The most messages of one group in the handler at once. */
		volatile int mostAtOnce;

		Orders(ObjectProvider<DelayQueueTestClock> clock) {
			this.clock = clock;
		}

		@DelayListener(topic = "orders", concurrency = "4")
		void onStep(Delivery<String> delivery) {
			AtomicInteger ofGroup = this.running.computeIfAbsent(String.valueOf(delivery.group()),
					(group) -> new AtomicInteger());
			this.mostAtOnce = Math.max(this.mostAtOnce, ofGroup.incrementAndGet());
			try {
				this.handled.put(delivery.id() + "#" + delivery.attempt(), this.clock.getObject().now());
				if (delivery.id().endsWith("-1") && delivery.attempt() == 1 && delivery.group() != null
						&& !delivery.group().equals("other")) {
					throw new IllegalStateException("first attempt of the first step fails");
				}
			}
			finally {
				ofGroup.decrementAndGet();
			}
		}

	}

}
