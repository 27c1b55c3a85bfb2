package io.github.delayqueue.test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.annotation.Bean;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import static io.github.delayqueue.test.DelayQueueAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Boot 3.5 application with the Spring Boot 3 starter and test kit, as a user
 * writes it: a listener of JSON payloads (Jackson 2), a 30-minute timeout tested in
 * milliseconds, sends held back by a transaction, the Actuator endpoint, health and
 * metrics over HTTP. The application's own Redis settings point at a host that does not
 * exist: the test Redis wins.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.data.redis.host=production-redis.invalid", "spring.data.redis.port=6390",
				"management.endpoints.web.exposure.include=health,metrics,delayqueue",
				"management.endpoint.health.show-details=always" })
@EmbeddedDelayQueue
class SpringBoot3ApplicationTests {

	@Autowired
	private DelayQueueTestClock clock;

	@Autowired
	private DelayQueueTemplate queue;

	@Autowired
	private OrderTimeouts timeouts;

	@Autowired
	private TestRestTemplate http;

	@Autowired
	private TransactionTemplate transactions;

	@BeforeEach
	void forgetEarlierDeliveries() {
		this.timeouts.received.clear();
	}

	@Test
	void runsOnSpringBoot3() {
		assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
	}

	@Test
	void anOrderNotPaidWithinThirtyMinutesIsCancelledOnceThirtyMinutesHavePassed() {
		this.queue.send("order-timeouts", new Order("o-1", 3), Duration.ofMinutes(30));
		this.clock.advance(Duration.ofMinutes(29));
		assertThat(this.timeouts.received).isEmpty();
		assertThat(this.clock).topic("order-timeouts").hasScheduledCount(1);
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.timeouts.received).containsExactly(new Order("o-1", 3));
		assertThat(this.clock).topic("order-timeouts").isEmpty();
	}

	@Test
	void aSendInATransactionIsMadeOnlyWhenTheTransactionCommits() {
		this.transactions.executeWithoutResult((status) -> {
			this.queue.send("order-timeouts", new Order("rolled-back", 1), Duration.ofMinutes(1));
			status.setRollbackOnly();
		});
		this.transactions.executeWithoutResult(
				(status) -> this.queue.send("order-timeouts", new Order("committed", 1), Duration.ofMinutes(1)));
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.timeouts.received).containsExactly(new Order("committed", 1));
	}

	@Test
	void theActuatorShowsTheEndpointHealthAndMetrics() {
		this.queue.send("order-timeouts", new Order("o-2", 1), Duration.ofMinutes(5));
		ResponseEntity<Map<String, Object>> topic = get("/actuator/delayqueue/order-timeouts");
		assertThat(topic.getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(topic.getBody()).containsEntry("scheduled", 1);
		ResponseEntity<Map<String, Object>> health = get("/actuator/health");
		assertThat(health.getBody()).extractingByKey("components")
			.asInstanceOf(InstanceOfAssertFactories.MAP)
			.extractingByKey("delayQueue")
			.asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("status", "UP");
		ResponseEntity<Map<String, Object>> sent = get("/actuator/metrics/delay.queue.sent");
		assertThat(sent.getStatusCode()).isEqualTo(HttpStatus.OK);
	}

	private ResponseEntity<Map<String, Object>> get(String path) {
		return this.http.exchange(path, HttpMethod.GET, null, new ParameterizedTypeReference<Map<String, Object>>() {
		});
	}

	record Order(String id, int items) {
	}

	@SpringBootApplication
	static class OrderApplication {

		@Bean
		OrderTimeouts orderTimeouts() {
			return new OrderTimeouts();
		}

		@Bean
		TransactionTemplate transactionTemplate() {
			return new TransactionTemplate(new NoResourceTransactionManager());
		}

	}

	static class OrderTimeouts {

		final List<Order> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "order-timeouts")
		void onTimeout(Delivery<Order> delivery) {
			this.received.add(delivery.payload());
		}

	}

	/**
	 * Transactions without a resource, for their synchronization only.
	 */
	static class NoResourceTransactionManager extends AbstractPlatformTransactionManager {

		@Override
		protected Object doGetTransaction() {
			return new Object();
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
		}

	}

}
