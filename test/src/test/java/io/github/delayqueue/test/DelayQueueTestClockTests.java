package io.github.delayqueue.test;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static io.github.delayqueue.test.DelayQueueAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link DelayQueueTestClock#advance(Duration)} delivers what comes due in the span
 * through the real brokers, scripts and listeners, in due order, with retries, dead
 * letters, lease expiry, reschedule and cancel on the advanced clock. The application's
 * own Redis settings point at a host that does not exist: the test Redis wins.
 */
@SpringBootTest(properties = { "spring.data.redis.host=production-redis.invalid", "spring.data.redis.port=6390",
		"delay-queue.listener.backoff.initial-interval=1m", "delay-queue.listener.backoff.max-interval=1h",
		"delay-queue.topics.clicks.partitions=3" })
@EmbeddedDelayQueue
class DelayQueueTestClockTests {

	private static final Duration THIRTY_MINUTES = Duration.ofMinutes(30);

	@Autowired
	private DelayQueueTestClock clock;

	@Autowired
	private DelayQueueTemplate queue;

	@Autowired
	private RedisMessageStore store;

	@Autowired
	private Listeners listeners;

	@Autowired
	private DelayQueueRuntime listenersRuntime;

	@BeforeEach
	void forgetEarlierDeliveries() {
		this.listeners.reset();
	}

	@Test
	void aMessageDueInThirtyMinutesIsDeliveredOnceThirtyMinutesHavePassed() {
		Instant sentAt = this.clock.now().truncatedTo(ChronoUnit.MILLIS);
		send("timeouts", "order-1", THIRTY_MINUTES);
		this.clock.advance(Duration.ofMinutes(29));
		assertThat(this.listeners.timeouts).isEmpty();
		assertThat(this.clock).topic("timeouts").hasScheduled("order-1");
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.listeners.timeouts).extracting(Delivery::id).containsExactly("order-1");
		Delivery<String> delivery = this.listeners.timeouts.get(0);
		assertThat(delivery.dueAt()).isBetween(sentAt.plus(THIRTY_MINUTES), sentAt.plus(THIRTY_MINUTES).plusSeconds(5));
		assertThat(this.clock).topic("timeouts").isEmpty();
	}

	@Test
	void messagesComeInDueOrderWhateverTheirSendOrder() {
		send("timeouts", "c", Duration.ofMinutes(3));
		send("timeouts", "a", Duration.ofMinutes(1));
		send("timeouts", "d", Duration.ofHours(2));
		send("timeouts", "b", Duration.ofMinutes(2));
		this.clock.advance(Duration.ofHours(1));
		assertThat(this.listeners.timeouts).extracting(Delivery::id).containsExactly("a", "b", "c");
		assertThat(this.clock).topic("timeouts").hasScheduled("d").hasScheduledCount(1);
	}

	@Test
	void retriesThatFallInsideTheSpanAreDeliveredWithTheBackoffCountedOnTheClock() {
		this.listeners.failuresBeforeSuccess.put("flaky", 2);
		send("webhooks", "flaky", Duration.ofMinutes(5));
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(this.listeners.webhookAttempts).containsExactly(1);
		assertThat(this.clock).topic("webhooks").hasScheduled("flaky").message("flaky").hasAttempts(1);
		this.clock.advance(Duration.ofMinutes(10));
		assertThat(this.listeners.webhookAttempts).containsExactly(1, 2, 3);
		assertThat(this.clock).topic("webhooks").isEmpty();
	}

	@Test
	void aMessageThatKeepsFailingIsDeadLetteredAfterItsLastAttempt() {
		this.listeners.failuresBeforeSuccess.put("broken", Integer.MAX_VALUE);
		send("webhooks", "broken", Duration.ZERO);
		this.clock.advance(Duration.ofDays(1));
		assertThat(this.listeners.webhookAttempts).containsExactly(1, 2, 3);
		assertThat(this.clock).topic("webhooks")
			.hasDead("broken")
			.hasDeadCount(1)
			.message("broken")
			.hasLastErrorContaining("attempt 3 failed");
	}

	@Test
	void aMessageWhoseConsumerDiedIsDeliveredAgainOnceItsLeaseHasExpired() {
		// Another consumer claims it and dies: its lease runs out after five minutes.
		this.listenersRuntime.pause("timeouts");
		send("timeouts", "orphan", Duration.ZERO);
		Transitions.promote(this.store, "timeouts", 10);
		assertThat(Transitions.claim(this.store, "timeouts", 1, Duration.ofMinutes(5))).hasSize(1);
		this.listenersRuntime.resume("timeouts");
		this.clock.advance(Duration.ofMinutes(4));
		assertThat(this.listeners.timeouts).isEmpty();
		assertThat(this.clock).topic("timeouts").hasInFlight("orphan");
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.listeners.timeouts).extracting(Delivery::id).containsExactly("orphan");
	}

	@Test
	void aRescheduledMessageComesAtItsNewTimeAndACancelledOneNever() {
		send("timeouts", "moved", THIRTY_MINUTES);
		send("timeouts", "cancelled", THIRTY_MINUTES);
		assertThat(this.queue.reschedule("timeouts", "moved", Duration.ofHours(1))).isTrue();
		assertThat(this.queue.cancel("timeouts", "cancelled")).isTrue();
		this.clock.advance(THIRTY_MINUTES);
		assertThat(this.listeners.timeouts).isEmpty();
		assertThat(this.clock).topic("timeouts").doesNotHave("cancelled").hasScheduled("moved");
		this.clock.advance(THIRTY_MINUTES);
		assertThat(this.listeners.timeouts).extracting(Delivery::id).containsExactly("moved");
	}

	@Test
	void aMessageSentByAListenerAndDueInsideTheSpanIsDeliveredToo() {
		send("chain", "first", Duration.ofMinutes(1));
		this.clock.advance(Duration.ofMinutes(10));
		assertThat(this.listeners.timeouts).extracting(Delivery::id).containsExactly("first-follow-up");
	}

	@Test
	void eachTestStartsOnAnEmptyQueueAndTheClockNeverGoesBack() {
		Instant before = this.clock.now();
		assertThat(this.clock).topic("timeouts").isEmpty();
		assertThat(this.clock).topic("webhooks").isEmpty();
		assertThatIllegalArgumentException().isThrownBy(() -> this.clock.advance(Duration.ofSeconds(-1)))
			.withMessageContaining("cannot go back");
		this.clock.awaitIdle();
		assertThat(this.clock.now()).isAfterOrEqualTo(before);
	}

	@Test
	void theMessagesOfEveryPartitionOfATopicAreDeliveredWhenTheyComeDue() {
		List<String> ids = List.of("click-a", "click-b", "click-c", "click-f", "click-g", "click-h");
		assertThat(ids.stream().map((id) -> this.store.partitions().nameFor("clicks", id)).distinct()).hasSize(3);
		ids.forEach((id) -> send("clicks", id, THIRTY_MINUTES));
		this.clock.advance(Duration.ofMinutes(29));
		assertThat(this.listeners.clicks).isEmpty();
		assertThat(this.clock).topic("clicks").hasScheduledCount(6).hasScheduled("click-f");
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.listeners.clicks).containsExactlyInAnyOrderElementsOf(ids);
		assertThat(this.clock).topic("clicks").isEmpty();
	}

	private void send(String topic, String id, Duration delay) {
		this.queue.send(DelayMessage.builder(topic, id).id(id).delay(delay).build());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TestApplication {

		@Bean
		Listeners listeners(DelayQueueTemplate queue) {
			return new Listeners(queue);
		}

	}

	static class Listeners {

		private final DelayQueueTemplate queue;

		final List<Delivery<String>> timeouts = new CopyOnWriteArrayList<>();

		final List<Integer> webhookAttempts = new CopyOnWriteArrayList<>();

		final List<String> clicks = new CopyOnWriteArrayList<>();

		final Map<String, Integer> failuresBeforeSuccess = new ConcurrentHashMap<>();

		Listeners(DelayQueueTemplate queue) {
			this.queue = queue;
		}

		void reset() {
			this.timeouts.clear();
			this.webhookAttempts.clear();
			this.clicks.clear();
			this.failuresBeforeSuccess.clear();
		}

		@DelayListener(topic = "timeouts")
		void onTimeout(Delivery<String> delivery) {
			this.timeouts.add(delivery);
		}

		@DelayListener(topic = "webhooks", maxAttempts = 3)
		void onWebhook(Delivery<String> delivery) {
			this.webhookAttempts.add(delivery.attempt());
			if (delivery.attempt() <= this.failuresBeforeSuccess.getOrDefault(delivery.id(), 0)) {
				throw new IllegalStateException("attempt " + delivery.attempt() + " failed");
			}
		}

		@DelayListener(topic = "clicks")
		void onClick(Delivery<String> delivery) {
			this.clicks.add(delivery.id());
		}

		@DelayListener(topic = "chain")
		void onChain(Delivery<String> delivery) {
			this.queue.send(DelayMessage.builder("timeouts", delivery.id() + "-follow-up")
				.id(delivery.id() + "-follow-up")
				.delay(Duration.ofMinutes(2))
				.build());
		}

	}

}
