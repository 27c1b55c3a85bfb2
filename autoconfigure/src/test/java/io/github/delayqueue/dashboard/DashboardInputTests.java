package io.github.delayqueue.dashboard;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the dashboard does with input at its edges: topics and ids with characters that
 * paths cannot carry, pages far away, bodies too large, bodies that are not plainly JSON.
 * Always a clear 4xx and never a change; only a wildcard Content-Type, which Spring MVC
 * refuses before any route sees the request, gets its 500.
 */
@SpringBootTest(classes = DashboardInputTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "management.endpoint.delayqueue.access=unrestricted",
				"delay-queue.topics.input-partitioned.partitions=4" })
class DashboardInputTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	@Autowired
	private DelayQueueTemplate template;

	private RestTestClient client;

	private String baseUrl;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@BeforeEach
	void setUp(@LocalServerPort int port) {
		this.baseUrl = "http://localhost:" + port + "/delay-queue";
		this.client = RestTestClient.bindToServer().baseUrl(this.baseUrl).build();
	}

	@Test
	void topicsAndIdsWithSlashesAndDotsCanBeRead() {
		send("input/slash", "order/42");
		send("input-plain", "..");
		this.client.get()
			.uri("/api/message?topic={topic}&id={id}", "input/slash", "order/42")
			.exchange()
			.expectStatus()
			.isOk();
		this.client.get()
			.uri("/api/message?topic={topic}&id={id}", "input-plain", "..")
			.exchange()
			.expectStatus()
			.isOk();
		this.client.get()
			.uri("/api/topic?topic={topic}", "input/slash")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.page.messages[0].id")
			.isEqualTo("order/42");
	}

	@Test
	void aMissingParameterIsNamed() {
		this.client.get()
			.uri("/api/message?topic=input-plain")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("The parameter 'id' is missing");
	}

	@Test
	void aPageTooFarIntoAPartitionedTopicIsABadRequest() {
		send("input-partitioned", "p1");
		this.client.get()
			.uri("/api/topic?topic=input-partitioned&offset=10000&limit=20")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.value((error) -> assertThat((String) error).contains("partitions"));
	}

	@Test
	void aHugeOffsetIsABadRequest() {
		send("input-plain", "a1");
		this.client.get()
			.uri("/api/topic?topic=input-plain&offset=9223372036854775807")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("offset must be 0 to 1000000000 and limit 1 or more, but were 9223372036854775807 and 20");
	}

	@Test
	void aGroupIsReadByNameAsItIsAndANameNoGroupCanHaveIsABadRequest() {
		String group = "<b>shop & co</b>";
		this.template.send(DelayMessage.builder("input-groups", "x").id("g1").group(group).build());
		this.client.get()
			.uri("/api/topic?topic={topic}&group={group}", "input-groups", group)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.group.name")
			.isEqualTo(group)
			.jsonPath("$.group.ready")
			.isEqualTo(1)
			.jsonPath("$.group.firstReady[0]")
			.isEqualTo("g1");
		this.client.get()
			.uri("/api/topic?topic={topic}&group={group}", "input-groups", "bad\u0001")
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	@Test
	void aBodyTooLargeIsRefusedBeforeItIsRead() {
		send("input-plain", "kept");
		this.client.post()
			.uri("/api/message/actions?topic=input-plain&id=kept")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel", "delay", "x".repeat(DelayQueueDashboard.MAX_ACTION_BYTES)))
			.exchange()
			.expectStatus()
			.isEqualTo(413);
		this.client.get()
			.uri("/api/message?topic=input-plain&id=kept")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("scheduled");
	}

	@Test
	void aBadDelayIsShownShortened() {
		send("input-plain", "kept-2");
		this.client.post()
			.uri("/api/message/actions?topic=input-plain&id=kept-2")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "reschedule", "delay", "y".repeat(1000)))
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("delay must be a duration such as 10m or PT10M, but was '" + "y".repeat(64) + "…'");
	}

	@ParameterizedTest
	@ValueSource(strings = { "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
			"application/merge-patch+json" })
	void anActionWhoseBodyIsNotPlainlyJsonIsRefusedAndChangesNothing(String contentType) {
		send("input-plain", "kept-3");
		this.client.post()
			.uri("/api/message/actions?topic=input-plain&id=kept-3")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.header(HttpHeaders.CONTENT_TYPE, contentType)
			.body("{\"action\":\"cancel\"}")
			.exchange()
			.expectStatus()
			.isForbidden()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("Refused: a dashboard action must send JSON (Content-Type: application/json)");
		assertStillScheduled("kept-3");
	}

	@ParameterizedTest
	@ValueSource(strings = { "json", "application/json;charset=\"", "application/json, text/plain" })
	void anActionWithAMalformedContentTypeIsRefusedAndChangesNothing(String contentType) throws Exception {
		send("input-plain", "kept-5");
		HttpRequest request = HttpRequest
			.newBuilder(URI.create(this.baseUrl + "/api/message/actions?topic=input-plain&id=kept-5"))
			.header(CrossSiteRequestGuard.HEADER, "1")
			.header(HttpHeaders.CONTENT_TYPE, contentType)
			.POST(HttpRequest.BodyPublishers.ofString("{\"action\":\"cancel\"}"))
			.build();
		HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(403);
		assertThat(response.body()).contains("must send JSON (Content-Type: application/json)");
		assertStillScheduled("kept-5");
	}

	@ParameterizedTest
	@ValueSource(strings = { "*/*", "application/*", "application/*+json" })
	void anActionWithAWildcardContentTypeIsRefusedAndChangesNothing(String contentType) {
		// Spring MVC refuses a wildcard Content-Type before any route sees the request.
		send("input-plain", "kept-4");
		this.client.post()
			.uri("/api/message/actions?topic=input-plain&id=kept-4")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.header(HttpHeaders.CONTENT_TYPE, contentType)
			.body("{\"action\":\"cancel\"}")
			.exchange()
			.expectStatus()
			.value((status) -> assertThat(status).isGreaterThanOrEqualTo(400));
		assertStillScheduled("kept-4");
	}

	private void assertStillScheduled(String id) {
		this.client.get()
			.uri("/api/message?topic=input-plain&id={id}", id)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("scheduled");
	}

	private void send(String topic, String id) {
		this.template.send(DelayMessage.builder(topic, "x").id(id).delay(Duration.ofHours(1)).build());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
