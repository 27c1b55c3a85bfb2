package io.github.delayqueue.test;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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
 * Messages of groups on the test clock: each is delivered with its group when it comes
 * due, a paused group's wait until its pause ends on the test clock, a paced group's
 * messages each at its pace on the test clock, and the assertions read a message's group
 * and a group's ready messages.
 */
@SpringBootTest(properties = { "delay-queue.topics.calls.group-rate-limit.limit=1",
		"delay-queue.topics.calls.group-rate-limit.period=1m" })
@EmbeddedDelayQueue
class GroupsOnTheTestClockTests {

	@Autowired
	DelayQueueTemplate template;

	@Autowired
	DelayQueueTestClock clock;

	@Autowired
	DelayQueueGroups groups;

	@Autowired
	Webhooks webhooks;

	@BeforeEach
	void forgetEarlierDeliveries() {
		this.webhooks.delivered.clear();
		this.webhooks.calls.clear();
	}

	@Test
	void aRetryOfAWebhookIsDeliveredInItsGroupWhenItComesDue() {
		send("w-1", "shop-17", Duration.ofMinutes(5));
		send("w-2", null, Duration.ofMinutes(5));
		assertThat(this.clock).topic("webhooks").message("w-1").isInGroup("shop-17");
		assertThat(this.clock).topic("webhooks").message("w-2").isInNoGroup();
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(this.webhooks.delivered).containsExactlyInAnyOrder("w-1 in shop-17", "w-2 in no group");
		assertThat(this.clock).topic("webhooks").isEmpty();
	}

	@Test
	void aGroupConcurrencyOfOneHandlesAnOrdersStepsOneAtATimeInDueOrderWhenTheyComeDue() {
		for (int step = 1; step <= 5; step++) {
			this.template.send(DelayMessage.builder("order-steps", "step " + step)
				.id("step-" + step)
				.group("order-42")
				.delay(Duration.ofMinutes(30).plusMillis(step))
				.build());
		}
		this.clock.advance(Duration.ofMinutes(31));
		assertThat(this.webhooks.steps).containsExactly("step-1", "step-2", "step-3", "step-4", "step-5");
		assertThat(this.webhooks.mostAtOnce).isEqualTo(1);
		assertThat(this.clock).topic("order-steps").isEmpty();
	}

	@Test
	void aPausedGroupWaitsWhileTheOthersAreDeliveredAndItsPauseEndsOnTheTestClock() {
		this.groups.pause("webhooks", "shop-9", Duration.ofMinutes(10));
		send("p-1", "shop-9", Duration.ofMinutes(1));
		send("p-2", "shop-8", Duration.ofMinutes(1));
		this.clock.advance(Duration.ofMinutes(2));
		assertThat(this.webhooks.delivered).containsExactly("p-2 in shop-8");
		assertThat(this.clock).topic("webhooks").hasPausedGroup("shop-9").doesNotHavePausedGroup("shop-8");
		this.clock.advance(Duration.ofMinutes(10));
		assertThat(this.webhooks.delivered).containsExactly("p-2 in shop-8", "p-1 in shop-9");
		assertThat(this.clock).topic("webhooks").isEmpty();
	}

	@Test
	void aGroupLimitedToOneCallAMinuteGetsFiveWithinFiveMinutesOnTheTestClockOneAMinuteApart() {
		for (int i = 1; i <= 5; i++) {
			this.template.send(DelayMessage.builder("calls", "call " + i).id("call-" + i).group("api-1").build());
		}
		this.template.send(DelayMessage.builder("calls", "other").id("other").group("api-2").build());
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(this.webhooks.calls.keySet()).containsExactlyInAnyOrder("call-1", "other");
		this.clock.advance(Duration.ofMinutes(4));
		assertThat(this.webhooks.calls.keySet()).containsExactlyInAnyOrder("call-1", "other", "call-2", "call-3",
				"call-4", "call-5");
		for (int i = 2; i <= 5; i++) {
			assertThat(
					Duration.between(this.webhooks.calls.get("call-" + (i - 1)), this.webhooks.calls.get("call-" + i)))
				.as("call %d after call %d on the test clock", i, i - 1)
				.isGreaterThanOrEqualTo(Duration.ofMinutes(1))
				.isLessThan(Duration.ofSeconds(61));
		}
		assertThat(this.clock).topic("calls").isEmpty();
	}

	@Test
	void theReadyMessagesOfAGroupAreCountedWhileNoListenerTakesThem() {
		send("r-1", "shop-1", Duration.ZERO);
		send("r-2", "shop-1", Duration.ZERO);
		send("r-3", "shop-2", Duration.ZERO);
		assertThat(this.clock).topic("unheard")
			.hasReadyCountInGroup("shop-1", 2)
			.hasReadyCountInGroup("shop-2", 1)
			.hasReadyCountInGroup("shop-3", 0);
	}

	private void send(String id, String group, Duration delay) {
		String topic = id.startsWith("r-") ? "unheard" : "webhooks";
		DelayMessage.Builder message = DelayMessage.builder(topic, id).id(id).delay(delay);
		this.template.send((group != null) ? message.group(group).build() : message.build());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Config {

		@Bean
		Webhooks webhooks(ObjectProvider<DelayQueueTestClock> clock) {
			return new Webhooks(clock);
		}

	}

	static class Webhooks {

		final List<String> delivered = new CopyOnWriteArrayList<>();

		/** The calls handled, in order, with the time on the test clock then. */
		final Map<String, Instant> calls = Collections.synchronizedMap(new LinkedHashMap<>());

		private final ObjectProvider<DelayQueueTestClock> clock;

		final List<String> steps = new CopyOnWriteArrayList<>();

		private final AtomicInteger running = new AtomicInteger();

		volatile int mostAtOnce;

		Webhooks(ObjectProvider<DelayQueueTestClock> clock) {
			this.clock = clock;
		}

		@DelayListener(topic = "webhooks")
		void onWebhook(Delivery<String> delivery) {
			this.delivered.add(delivery.id() + " in " + ((delivery.group() != null) ? delivery.group() : "no group"));
		}

		@DelayListener(topic = "calls")
		void onCall(Delivery<String> delivery) {
			this.calls.put(delivery.id(), this.clock.getObject().now());
		}

		@DelayListener(topic = "order-steps", concurrency = "4", groupConcurrency = "1")
		void onStep(Delivery<String> delivery) {
			this.mostAtOnce = Math.max(this.mostAtOnce, this.running.incrementAndGet());
			this.steps.add(delivery.id());
			this.running.decrementAndGet();
		}

	}

}
