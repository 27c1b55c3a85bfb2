package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.UUID;

import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint's reads while Redis holds their replies answer 503 with an error naming
 * what did not answer, after the store's timeout
 * ({@code delay-queue.producer.send-timeout}) rather than the Redis client's (a minute on
 * Lettuce): even the topic {@code SCAN}, a plain command, is bounded by it.
 */
@SpringBootTest(classes = EndpointRedisTimeoutTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=delayqueue", "delay-queue.producer.send-timeout=1s",
				"spring.data.redis.timeout=60s" })
class EndpointRedisTimeoutTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final FaultyRedisProxy proxy = FaultyRedisProxy.start(TestRedis.shared().host(),
			TestRedis.shared().port());

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
		registry.add("spring.data.redis.host", proxy::host);
		registry.add("spring.data.redis.port", proxy::port);
	}

	@AfterAll
	static void closeProxy() {
		proxy.close();
	}

	@Test
	void theOverviewAnswers503NamingTheScanWhenRedisHoldsItsReply(@LocalServerPort int port) {
		proxy.delayNextReplyTo(FaultyRedisProxy.named("SCAN"), Duration.ofSeconds(10));
		RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + port + "/actuator")
			.build()
			.get()
			.uri("/delayqueue")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("Redis could not be read: The SCAN for the topics under '" + PREFIX
					+ "' did not finish within 500ms");
	}

	@Test
	void aTopicReadAnswers503NamingWhatDidNotAnswerWhenRedisHoldsItsReply(@LocalServerPort int port) {
		String topic = "held-" + UUID.randomUUID().toString().substring(0, 8);
		proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", topic),
				Duration.ofSeconds(10));
		RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + port + "/actuator")
			.build()
			.get()
			.uri("/delayqueue/{topic}", topic)
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.value(String.class,
					// within what was left of the second when the script was sent
					(error) -> assertThat(error).matches("Redis could not be read: No partition of topic '" + topic
							+ "' answered: " + topic + ": Redis did not answer within (1s|\\d{3}ms).*"));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
