package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

/**
 * The {@code delayqueue} endpoint exposed without granting write access: reads work,
 * every write operation is refused and changes nothing.
 */
@SpringBootTest(classes = DelayQueueEndpointAccessTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=health,delayqueue")
class DelayQueueEndpointAccessTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	@Autowired
	private DelayQueueTemplate template;

	private RestTestClient client;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@BeforeEach
	void setUp(@LocalServerPort int port) {
		this.client = RestTestClient.bindToServer().baseUrl("http://localhost:" + port + "/actuator").build();
	}

	@Test
	void readOperationsWorkWithTheDefaultAccess() {
		this.template.send(DelayMessage.builder("orders", "x").id("m1").delay(Duration.ofHours(1)).build());
		this.client.get().uri("/delayqueue").exchange().expectStatus().isOk();
		this.client.get().uri("/delayqueue/{topic}", "orders").exchange().expectStatus().isOk();
		this.client.get().uri("/delayqueue/{topic}/{id}", "orders", "m1").exchange().expectStatus().isOk();
	}

	@Test
	void writeOperationsAreRefusedWithTheDefaultAccessAndChangeNothing() {
		this.template.send(DelayMessage.builder("orders", "x").id("m2").delay(Duration.ofHours(1)).build());
		this.client.delete()
			.uri("/delayqueue/{topic}/{id}", "orders", "m2")
			.exchange()
			.expectStatus()
			.is4xxClientError();
		this.client.post()
			.uri("/delayqueue/{topic}/{id}", "orders", "m2")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel"))
			.exchange()
			.expectStatus()
			.is4xxClientError();
		this.client.post()
			.uri("/delayqueue/{topic}", "orders")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "purge-dead"))
			.exchange()
			.expectStatus()
			.is4xxClientError();
		this.client.get()
			.uri("/delayqueue/{topic}/{id}", "orders", "m2")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("scheduled");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
