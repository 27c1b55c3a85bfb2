package io.github.delayqueue.sample;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample end to end over HTTP, on the embedded Redis (no {@code spring.data.redis.*}
 * is set), with a one-second order timeout.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "sample.order-timeout=1s")
class SampleApplicationTests {

	private RestTestClient client;

	@BeforeEach
	void setUp(@LocalServerPort int port) {
		this.client = RestTestClient.bindToServer().baseUrl("http://localhost:" + port).build();
	}

	@Test
	void anUnpaidOrderIsCancelledWhenItsTimeoutArrives() {
		Order order = create();
		assertThat(order.status()).isEqualTo(OrderStatus.CREATED);
		assertThat(order.timeoutAt()).isBetween(order.createdAt(), order.createdAt().plusSeconds(2));

		await().atMost(Duration.ofSeconds(10)).until(() -> get(order.id()).status() == OrderStatus.CANCELLED);
	}

	@Test
	void aPaidOrderStaysPaidAfterItsTimeoutHasPassed() {
		Order order = create();
		Order paid = this.client.post()
			.uri("/orders/{id}/pay", order.id())
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(Order.class)
			.getResponseBody();
		assertThat(paid.status()).isEqualTo(OrderStatus.PAID);

		await().during(Duration.ofSeconds(3))
			.atMost(Duration.ofSeconds(5))
			.until(() -> get(order.id()).status() == OrderStatus.PAID);
	}

	@Test
	void payingACancelledOrderIsAConflict() {
		Order order = create();
		await().atMost(Duration.ofSeconds(10)).until(() -> get(order.id()).status() == OrderStatus.CANCELLED);

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
		await().atMost(Duration.ofSeconds(10)).until(() -> get(order.id()).status() == OrderStatus.CANCELLED);
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
