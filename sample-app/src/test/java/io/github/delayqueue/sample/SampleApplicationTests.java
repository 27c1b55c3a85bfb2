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
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

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

	private RestClient client;

	@BeforeEach
	void setUp(@LocalServerPort int port) {
		// Every status is an answer to check here, not an error.
		this.client = RestClient.builder()
			.baseUrl("http://localhost:" + port)
			.defaultStatusHandler((status) -> true, (request, response) -> {
			})
			.build();
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
		ResponseEntity<Order> paid = this.client.post()
			.uri("/orders/{id}/pay", order.id())
			.retrieve()
			.toEntity(Order.class);
		assertThat(paid.getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(paid.getBody().status()).isEqualTo(OrderStatus.PAID);
		assertThat(this.clock).topic(OrderService.TIMEOUT_TOPIC).doesNotHave(order.id());

		this.clock.advance(Duration.ofHours(1));
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.PAID);
	}

	@Test
	void payingACancelledOrderIsAConflict() {
		Order order = create();
		this.clock.advance(ORDER_TIMEOUT);
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.CANCELLED);

		assertThat(status(this.client.post().uri("/orders/{id}/pay", order.id()))).isEqualTo(HttpStatus.CONFLICT);
	}

	@Test
	void anUnknownOrderIsNotFound() {
		assertThat(status(this.client.get().uri("/orders/{id}", "no-such-order"))).isEqualTo(HttpStatus.NOT_FOUND);
		assertThat(status(this.client.post().uri("/orders/{id}/pay", "no-such-order"))).isEqualTo(HttpStatus.NOT_FOUND);
	}

	@Test
	void anOrderWithoutItemIsABadRequest() {
		assertThat(status(this.client.post().uri("/orders").body(Map.of("amount", 12.5))))
			.isEqualTo(HttpStatus.BAD_REQUEST);
	}

	@Test
	void actuatorShowsTheQueuesHealthMetricsAndTopics() {
		Order order = create();
		this.clock.advance(ORDER_TIMEOUT);
		assertThat(get(order.id()).status()).isEqualTo(OrderStatus.CANCELLED);
		String health = ok(this.client.get().uri("/actuator/health").retrieve().toEntity(String.class));
		assertThat(health).contains("\"delayQueue\"").contains("order-timeout");
		String topics = ok(this.client.get().uri("/actuator/delayqueue").retrieve().toEntity(String.class));
		assertThat(topics).contains("\"order-timeout\"").contains("\"listener\"");
		String acked = ok(
				this.client.get().uri("/actuator/metrics/delay.queue.acked").retrieve().toEntity(String.class));
		assertThat(acked).contains("\"COUNT\"");
	}

	private Order create() {
		ResponseEntity<Order> created = this.client.post()
			.uri("/orders")
			.body(Map.of("item", "book", "amount", 12.5))
			.retrieve()
			.toEntity(Order.class);
		assertThat(created.getStatusCode()).isEqualTo(HttpStatus.CREATED);
		return created.getBody();
	}

	private Order get(String id) {
		return ok(this.client.get().uri("/orders/{id}", id).retrieve().toEntity(Order.class));
	}

	private static <T> T ok(ResponseEntity<T> response) {
		assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
		return response.getBody();
	}

	private static HttpStatus status(RestClient.RequestHeadersSpec<?> request) {
		return HttpStatus.valueOf(request.retrieve().toBodilessEntity().getStatusCode().value());
	}

}
