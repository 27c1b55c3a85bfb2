package io.github.delayqueue.sample;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

import io.github.delayqueue.test.DelayQueueTestClock;
import io.github.delayqueue.test.EmbeddedDelayQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.RestTestClient;

import static io.github.delayqueue.test.DelayQueueAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample end to end over HTTP with its default 30-second order timeout, on a Redis of
 * the test's own ({@link EmbeddedDelayQueue @EmbeddedDelayQueue}), whose test clock makes
 * the 30 seconds pass at once.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@EmbeddedDelayQueue
class SampleApplicationTests {

	private static final Duration ORDER_TIMEOUT = Duration.ofSeconds(30);

	@Autowired
	private DelayQueueTestClock clock;

	private RestTestClient client;

	@BeforeEach
	void setUp(@LocalServerPort int port) {
		this.client = RestTestClient.bindToServer().baseUrl("http://localhost:" + port).build();
	}

	@Test
	void anUnpaidOrderIsCancelledWhenItsTimeoutArrives() {
		Instant now = this.clock.now().truncatedTo(ChronoUnit.MILLIS);
		Order order = create();
		assertThat(order.status()).isEqualTo(OrderStatus.CREATED);
		assertThat(order.timeoutAt()).isBetween(now.plus(ORDER_TIMEOUT), now.plus(ORDER_TIMEOUT).plusSeconds(2));

		this.clock.advance(ORDER_TIMEOUT.minusSeconds(1));
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.CREATED);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.CANCELLED);
	}

	@Test
	void aPaidOrderIsNeverCancelled() {
		Order order = create();
		Order paid = this.client.post()
			.uri("/orders/{id}/pay", order.id())
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(Order.class)
			.getResponseBody();
		assertThat(paid.status()).isEqualTo(OrderStatus.PAID);
		assertThat(this.clock).topic(OrderService.TIMEOUT_TOPIC).doesNotHave(order.id());

		this.clock.advance(Duration.ofHours(1));
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.PAID);
	}

	@Test
	void payingACancelledOrderIsAConflict() {
		Order order = create();
		this.clock.advance(ORDER_TIMEOUT);
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.CANCELLED);

		this.client.post().uri("/orders/{id}/pay", order.id()).exchange().expectStatus().isEqualTo(HttpStatus.CONFLICT);
	}

	@Test
	void anUnknownOrderIsNotFound() {
		this.client.get().uri("/orders/{id}", "no-such-order").exchange().expectStatus().isNotFound();
		this.client.post().uri("/orders/{id}/pay", "no-such-order").exchange().expectStatus().isNotFound();
	}

	@Test
	void anOrderWithoutItemIsABadRequest() {
		this.client.post().uri("/orders").body(Map.of("amount", 12.5)).exchange().expectStatus().isBadRequest();
	}

	@Test
	void actuatorShowsTheQueuesHealthMetricsAndTopics() {
		Order order = create();
		this.clock.advance(ORDER_TIMEOUT);
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.CANCELLED);
		String health = this.client.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(String.class)
			.getResponseBody();
		assertThat(health).contains("\"delayQueue\"").contains("order-timeout");
		String topics = this.client.get()
			.uri("/actuator/delayqueue")
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(String.class)
			.getResponseBody();
		assertThat(topics).contains("\"order-timeout\"").contains("\"listener\"");
		String acked = this.client.get()
			.uri("/actuator/metrics/delay.queue.acked")
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(String.class)
			.getResponseBody();
		assertThat(acked).contains("\"COUNT\"");
	}

	private Order create() {
		return this.client.post()
			.uri("/orders")
			.body(Map.of("item", "book", "amount", 12.5))
			.exchange()
			.expectStatus()
			.isCreated()
			.returnResult(Order.class)
			.getResponseBody();
	}

	private Order get(String id) {
		return this.client.get()
			.uri("/orders/{id}", id)
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(Order.class)
			.getResponseBody();
	}

}
