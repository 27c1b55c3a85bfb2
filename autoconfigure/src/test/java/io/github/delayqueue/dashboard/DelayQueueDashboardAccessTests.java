package io.github.delayqueue.dashboard;

import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

/**
 * The dashboard follows the {@code delayqueue} endpoint's access: with access
 * {@code none} it shows nothing, whatever its own setting.
 */
@SpringBootTest(classes = DelayQueueDashboardAccessTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "delay-queue.dashboard.path=/ops/queue",
				"management.endpoint.delayqueue.access=none" })
class DelayQueueDashboardAccessTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@Test
	void withTheEndpointsAccessNoneTheDashboardReadsNothing(@LocalServerPort int port) {
		RestTestClient client = RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + port + "/ops/queue")
			.build();
		client.get()
			.uri("/api/overview")
			.exchange()
			.expectStatus()
			.isForbidden()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("The delayqueue endpoint's access is none (management.endpoint.delayqueue.access)");
		client.get().uri("/").exchange().expectStatus().isOk();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
