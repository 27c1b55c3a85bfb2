package io.github.delayqueue.dashboard;

import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

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
 * Dashboard actions with the endpoint's access unrestricted: they run when the
 * dashboard's own page sends them, and a request another site could have made a browser
 * send is refused and changes nothing.
 */
@SpringBootTest(classes = DelayQueueDashboardActionsTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "management.endpoint.delayqueue.access=unrestricted" })
class DelayQueueDashboardActionsTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final String ACTIONS = "/api/message/actions?topic=dashboard-actions&id={id}";

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private DelayQueueSchedules schedules;

	private RestTestClient client;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		QueueContexts.register(registry, PREFIX);
	}

	@BeforeEach
	void setUp(@LocalServerPort int port) {
		this.client = RestTestClient.bindToServer().baseUrl("http://localhost:" + port + "/delay-queue").build();
	}

	@Test
	void theAccessIsUnrestricted() {
		this.client.get()
			.uri("/api/access")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.access")
			.isEqualTo("unrestricted");
	}

	@Test
	void thePageCancelsAMessage() {
		send("to-cancel");
		this.client.post()
			.uri(ACTIONS, "to-cancel")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.header("Sec-Fetch-Site", "same-origin")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.affected")
			.isEqualTo(1);
		this.client.get()
			.uri("/api/message?topic=dashboard-actions&id=to-cancel")
			.exchange()
			.expectStatus()
			.isNotFound();
	}

	@Test
	void aRequestWithoutTheDashboardsHeaderIsRefused() {
		send("kept-1");
		this.client.post()
			.uri(ACTIONS, "kept-1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel"))
			.exchange()
			.expectStatus()
			.isForbidden()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("Refused: a dashboard action must carry the header X-Delay-Queue-Dashboard: 1");
		assertStillScheduled("kept-1");
	}

	@Test
	void aFormPostFromAnotherSiteIsRefused() {
		send("kept-2");
		this.client.post()
			.uri(ACTIONS, "kept-2")
			.header(HttpHeaders.ORIGIN, "https://evil.example")
			.contentType(MediaType.APPLICATION_FORM_URLENCODED)
			.body("action=cancel")
			.exchange()
			.expectStatus()
			.isForbidden();
		assertStillScheduled("kept-2");
	}

	@Test
	void aRequestFromAnotherOriginIsRefusedEvenWithTheHeader() {
		send("kept-3");
		this.client.post()
			.uri(ACTIONS, "kept-3")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.header(HttpHeaders.ORIGIN, "https://evil.example")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel"))
			.exchange()
			.expectStatus()
			.isForbidden()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("Refused: a cross-site request (Origin: https://evil.example)");
		this.client.post()
			.uri(ACTIONS, "kept-3")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.header("Sec-Fetch-Site", "cross-site")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel"))
			.exchange()
			.expectStatus()
			.isForbidden();
		assertStillScheduled("kept-3");
	}

	@Test
	void badActionsAreRefusedWithAClearError() {
		send("kept-4");
		action("kept-4", Map.of("action", "reschedule", "delay", "soon")).expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("delay must be a duration such as 10m or PT10M, but was 'soon'");
		action("kept-4", Map.of("action", "explode")).expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("Unknown message action 'explode': use reschedule, cancel, replay or purge");
		action("kept-4", Map.of()).expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("An action is missing, such as {\"action\":\"cancel\"}");
		assertStillScheduled("kept-4");
	}

	@Test
	void aRescheduleTakesADurationAsTheEndpointDoes() {
		send("to-move");
		action("to-move", Map.of("action", "reschedule", "delay", "2h")).expectStatus().isOk();
		assertStillScheduled("to-move");
	}

	@Test
	void theOverviewListsSchedulesWhichThePagePausesResumesAndTriggers() {
		this.schedules.save(Schedule.cron("dashboard-nightly", "dashboard-actions", "0 0 2 * * *")
			.withZone(ZoneId.of("Europe/Berlin")));
		this.client.get()
			.uri("/api/overview")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.queue.schedules[?(@.name == 'dashboard-nightly')].cron")
			.isEqualTo("0 0 2 * * *")
			.jsonPath("$.queue.schedules[?(@.name == 'dashboard-nightly')].zone")
			.isEqualTo("Europe/Berlin");
		scheduleAction("pause-schedule").jsonPath("$.detail").isEqualTo("schedule paused");
		assertThat(this.schedules.get("dashboard-nightly").orElseThrow().paused()).isTrue();
		scheduleAction("resume-schedule").jsonPath("$.detail").isEqualTo("schedule resumed");
		scheduleAction("trigger-schedule").jsonPath("$.affected").isEqualTo(1);
		this.client.post()
			.uri("/api/topic/actions?topic=dashboard-actions")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "pause-schedule", "schedule", "no-such"))
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("Topic 'dashboard-actions' has no schedule named 'no-such'");
	}

	@Test
	void aDeadLetterQueueIsReadByItsEscapedName() {
		this.client.get()
			.uri("/api/topic?topic={topic}&state=ready", "dashboard-actions#dead")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.topic")
			.isEqualTo("dashboard-actions#dead");
	}

	private RestTestClient.BodyContentSpec scheduleAction(String action) {
		return this.client.post()
			.uri("/api/topic/actions?topic=dashboard-actions")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", action, "schedule", "dashboard-nightly"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody();
	}

	private RestTestClient.ResponseSpec action(String id, Map<String, String> body) {
		return this.client.post()
			.uri(ACTIONS, id)
			.header(CrossSiteRequestGuard.HEADER, "1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(body)
			.exchange();
	}

	private void send(String id) {
		this.template.send(DelayMessage.builder("dashboard-actions", "x").id(id).delay(Duration.ofHours(1)).build());
	}

	private void assertStillScheduled(String id) {
		this.client.get()
			.uri("/api/message?topic=dashboard-actions&id={id}", id)
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
