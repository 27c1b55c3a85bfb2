package io.github.delayqueue.autoconfigure;

import java.time.Duration;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.dashboard.DelayQueueDashboard;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard on Spring Boot 3.5 with Jackson 2: the same page and JSON as on Spring
 * Boot 4.
 */
@SpringBootTest(classes = SpringBoot3DashboardTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "delay-queue.dashboard.enabled=true")
class SpringBoot3DashboardTests {

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private TestRestTemplate rest;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		TestRedisProperties.register(registry);
	}

	@Test
	void thePageIsServedWithItsSecurityHeaders() {
		ResponseEntity<String> page = this.rest.getForEntity("/delay-queue/", String.class);
		assertThat(page.getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(page.getHeaders().getContentType()).isNotNull()
			.matches((type) -> type.isCompatibleWith(MediaType.TEXT_HTML));
		assertThat(page.getHeaders().getFirst("Content-Security-Policy"))
			.isEqualTo(DelayQueueDashboard.CONTENT_SECURITY_POLICY);
		assertThat(page.getBody()).contains("assets/dashboard.js");
	}

	@Test
	void theOverviewAndAMessageAreReadAsJson() {
		this.template.send(DelayMessage.builder("boot3-dashboard", "<script>alert(1)</script>")
			.id("boot3-m1")
			.delay(Duration.ofHours(1))
			.build());
		ResponseEntity<String> overview = this.rest.getForEntity("/delay-queue/api/overview", String.class);
		assertThat(overview.getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(overview.getBody()).contains("\"access\":\"read-only\"").contains("\"boot3-dashboard\":{");
		ResponseEntity<String> message = this.rest
			.getForEntity("/delay-queue/api/message?topic=boot3-dashboard&id=boot3-m1", String.class);
		assertThat(message.getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(message.getBody()).contains("\"state\":\"scheduled\"");
		assertThat(message.getHeaders().getContentType()).isNotNull()
			.matches((type) -> type.isCompatibleWith(MediaType.APPLICATION_JSON));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
