package io.github.delayqueue.test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import org.junit.jupiter.api.RepeatedTest;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A listener of dead letters on the test clock: the message that dies in each test
 * reaches it, though the test kit deletes every message before each test.
 */
@SpringBootTest
@EmbeddedDelayQueue
class DeadLettersOnTheTestClockTests {

	@Autowired
	private DelayQueueTestClock clock;

	@Autowired
	private DelayQueueTemplate queue;

	@Autowired
	private Payments payments;

	@RepeatedTest(2)
	void aPaymentThatFailsForGoodReachesTheListenerOfDeadLetters() {
		this.payments.dead.clear();
		this.queue.send(DelayMessage.builder("payments", "card-1").delay(Duration.ofMinutes(5)).build());
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(this.payments.dead).extracting(Delivery::payload).containsExactly("card-1");
		assertThat(this.payments.dead.get(0).deadLetter().error())
			.isEqualTo("java.lang.IllegalStateException: declined");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Payments {

		final List<Delivery<String>> dead = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "payments", maxAttempts = 1)
		void on(String payment) {
			throw new IllegalStateException("declined");
		}

		@DelayListener(topic = "payments", deadLetters = true)
		void onDead(Delivery<String> delivery) {
			this.dead.add(delivery);
		}

	}

}
