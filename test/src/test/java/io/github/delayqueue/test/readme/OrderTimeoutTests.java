package io.github.delayqueue.test.readme;

import java.time.Duration;

import io.github.delayqueue.test.DelayQueueTestClock;
import io.github.delayqueue.test.EmbeddedDelayQueue;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static io.github.delayqueue.test.DelayQueueAssertions.assertThat;

@SpringBootTest
@EmbeddedDelayQueue
class OrderTimeoutTests {

	@Autowired
	Orders orders;

	@Autowired
	DelayQueueTestClock clock;

	@Test
	void anUnpaidOrderTimesOutAfterThirtyMinutes() {
		this.orders.place("o-1");
		this.clock.advance(Duration.ofMinutes(29));
		assertThat(this.clock).topic("order-timeout").hasScheduled("o-1");
		this.clock.advance(Duration.ofMinutes(1)); // delivered to onTimeout, and handled
		assertThat(this.clock).topic("order-timeout").isEmpty();
	}

	@Test
	void aPaidOrderNeverTimesOut() {
		this.orders.place("o-2");
		this.orders.paid("o-2");
		assertThat(this.clock).topic("order-timeout").doesNotHave("o-2");
	}

}
