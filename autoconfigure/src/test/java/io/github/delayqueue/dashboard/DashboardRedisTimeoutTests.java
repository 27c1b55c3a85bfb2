package io.github.delayqueue.dashboard;

import java.time.Duration;

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
 * A dashboard request while Redis does not answer gets 503 within the dashboard's own
 * timeout, even for the overview's topic {@code SCAN}, which runs with the Redis client's
 * timeout (Lettuce's is a minute unless set): the overview waits a little less than the
 * dashboard's timeout, so the error names the {@code SCAN}.
 */
@SpringBootTest(classes = DashboardRedisTimeoutTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "delay-queue.dashboard.timeout=1s" })
class DashboardRedisTimeoutTests {

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
	void theOverviewAnswers503WhenRedisHangs(@LocalServerPort int port) {
		proxy.delayNextReplyTo(FaultyRedisProxy.named("SCAN"), Duration.ofSeconds(20));
		RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + port + "/delay-queue")
			.build()
			.get()
			.uri("/api/overview")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.value(String.class, (error) -> assertThat(error).startsWith(
					"Redis could not be read: The SCAN for the topics under '" + PREFIX + "' did not finish within "));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
