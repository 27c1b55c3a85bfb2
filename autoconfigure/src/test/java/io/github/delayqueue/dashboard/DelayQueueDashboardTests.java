package io.github.delayqueue.dashboard;

import java.time.Duration;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard in a running application on real Redis: its page and scripts from the
 * jar, under restrictive security headers, and its JSON, read through the endpoint's
 * operations with the endpoint's default access.
 */
@SpringBootTest(classes = DelayQueueDashboardTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "delay-queue.dashboard.enabled=true", "delay-queue.topics.dashboard-partitioned.partitions=3" })
class DelayQueueDashboardTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@Autowired
	private RedisDataLossWatch dataLoss;

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
	void thePageComesFromTheJarWithHeadersThatForbidInlineScriptsAndFraming() {
		String page = this.client.get()
			.uri("/")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.TEXT_HTML)
			.expectHeader()
			.valueEquals("Content-Security-Policy", DelayQueueDashboard.CONTENT_SECURITY_POLICY)
			.expectHeader()
			.valueEquals("X-Content-Type-Options", "nosniff")
			.expectHeader()
			.valueEquals("X-Frame-Options", "DENY")
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(page).contains("<script src=\"assets/dashboard.js\" defer></script>").doesNotContain("http");
		this.client.get()
			.uri("/assets/dashboard.js")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.valueOf("text/javascript"));
		this.client.get().uri("/assets/dashboard.css").exchange().expectStatus().isOk();
	}

	@Test
	void theOverviewSaysWhenRedisLostTheQueuesData() {
		this.dataLoss.check();
		new StringRedisTemplate(this.connectionFactory).delete(TopicKeys.datasetMarker(PREFIX));
		assertThat(this.dataLoss.check()).isTrue();
		String body = this.client.get()
			.uri("/api/overview")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(body).contains("\"redisDataLost\"").contains("Redis lost the delay queue's data");
	}

	@Test
	void thePathWithoutItsSlashRedirectsToThePage() {
		this.client.get()
			.uri("")
			.exchange()
			.expectStatus()
			.isFound()
			.expectHeader()
			.valueEquals(HttpHeaders.LOCATION, "delay-queue/");
	}

	@Test
	void theOverviewListsTopicsWithTheirCountsAndTheAccess() {
		this.template.send(DelayMessage.builder("dashboard-overview", "x").delay(Duration.ofHours(1)).build());
		this.template.send(DelayMessage.builder("dashboard-overview", "y").delay(Duration.ofHours(2)).build());
		this.client.get()
			.uri("/api/overview")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals(HttpHeaders.CACHE_CONTROL, "no-store")
			.expectBody()
			.jsonPath("$.access")
			.isEqualTo("read-only")
			.jsonPath("$.queue.topics.dashboard-overview.scheduled")
			.isEqualTo(2)
			.jsonPath("$.queue.topics.dashboard-overview.ready")
			.isEqualTo(0);
	}

	@Test
	void aKeyOfTheWrongTypeUnderThePrefixIsReportedInTheOverviewAndTheOtherTopicsAreShown() {
		this.template.send(DelayMessage.builder("dashboard-beside-wrong-type", "x").delay(Duration.ofHours(1)).build());
		StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
		String wrongTypeKey = PREFIX + ":{dashboard-wrong-type}:m";
		redis.opsForValue().set(wrongTypeKey, "another application's value");
		try {
			this.client.get()
				.uri("/api/overview")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.queue.topics.dashboard-beside-wrong-type.scheduled")
				.isEqualTo(1)
				.jsonPath("$.queue.topics.dashboard-wrong-type")
				.doesNotExist()
				.jsonPath("$.queue.errors.dashboard-wrong-type")
				.value(String.class, (error) -> assertThat(error).contains("wrong Redis type"));
		}
		finally {
			redis.delete(wrongTypeKey);
		}
	}

	@Test
	void theMetersOfTheLiveChartsAreTheApplicationsOwn() {
		this.template.send(DelayMessage.builder("dashboard-meters", "x").delay(Duration.ofHours(1)).build());
		this.client.get()
			.uri("/api/meters")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.available")
			.isEqualTo(true)
			.jsonPath("$.sent")
			.value((sent) -> assertThat(((Number) sent).doubleValue()).isGreaterThanOrEqualTo(1))
			.jsonPath("$.delivered")
			.isNumber()
			.jsonPath("$.failed")
			.isNumber()
			.jsonPath("$.latenessMaxMs")
			.isNumber();
	}

	@Test
	void aTopicIsShownPageByPageWithThePriorityOfEachMessage() {
		for (int i = 0; i < 5; i++) {
			this.template.send(DelayMessage.builder("dashboard-pages", "m" + i)
				.id("page-" + i)
				.delay(Duration.ofMinutes(10 + i))
				.priority(i)
				.build());
		}
		this.client.get()
			.uri("/api/topic?topic=dashboard-pages&state=scheduled&offset=2&limit=2")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.page.total")
			.isEqualTo(5)
			.jsonPath("$.page.messages[0].id")
			.isEqualTo("page-2")
			.jsonPath("$.page.messages[0].priority")
			.isEqualTo(2)
			.jsonPath("$.page.messages[1].id")
			.isEqualTo("page-3")
			.jsonPath("$.page.messages.length()")
			.isEqualTo(2);
	}

	@Test
	void theRedisPanelShowsTheModeAndThePrimaryWithItsVersion() {
		this.client.get()
			.uri("/api/redis")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.mode")
			.isEqualTo("standalone")
			.jsonPath("$.primaries.length()")
			.isEqualTo(1)
			.jsonPath("$.primaries[0].version")
			.isNotEmpty()
			.jsonPath("$.primaries[0].persistence")
			.isNotEmpty()
			.jsonPath("$.warnings")
			.isArray();
	}

	@Test
	void aMessageIsFoundByIdWithItsPayloadAsJsonText() {
		this.template.send(DelayMessage.builder("dashboard-message", "<script>alert(1)</script>")
			.id("script-payload")
			.header("tenant", "<b>acme</b>")
			.delay(Duration.ofHours(1))
			.build());
		this.client.get()
			.uri("/api/message?topic=dashboard-message&id=script-payload")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
			.expectHeader()
			.valueEquals("X-Content-Type-Options", "nosniff")
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("scheduled")
			.jsonPath("$.payload")
			.isEqualTo("<script>alert(1)</script>")
			.jsonPath("$.headers.tenant")
			.isEqualTo("<b>acme</b>");
	}

	@Test
	void aPartitionedTopicIsReadAcrossItsPartitions() {
		for (int i = 0; i < 6; i++) {
			this.template.send(DelayMessage.builder("dashboard-partitioned", "p" + i)
				.id("spread-" + i)
				.delay(Duration.ofMinutes(30 + i))
				.build());
		}
		this.client.get()
			.uri("/api/topic?topic=dashboard-partitioned&limit=10")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.partitions")
			.isEqualTo(3)
			.jsonPath("$.scheduled")
			.isEqualTo(6)
			.jsonPath("$.page.total")
			.isEqualTo(6)
			.jsonPath("$.page.messages[0].id")
			.isEqualTo("spread-0")
			.jsonPath("$.page.messages[5].id")
			.isEqualTo("spread-5")
			.jsonPath("$.page.messages[0].partition")
			.isEqualTo(TopicPartitions.indexOf("spread-0", 3))
			.jsonPath("$.page.messages[5].partition")
			.isEqualTo(TopicPartitions.indexOf("spread-5", 3));
		for (int i = 0; i < 6; i++) {
			this.client.get()
				.uri("/api/message?topic=dashboard-partitioned&id=spread-" + i)
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.payload")
				.isEqualTo("p" + i);
		}
	}

	@Test
	void anUnknownMessageIsNotFoundWithAnErrorThatNamesIt() {
		this.client.get()
			.uri("/api/message?topic=dashboard-message&id=no-such-id")
			.exchange()
			.expectStatus()
			.isNotFound()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("Topic 'dashboard-message' has no message with id 'no-such-id'");
	}

	@Test
	void badPageArgumentsAreRefusedWithAClearError() {
		this.client.get()
			.uri("/api/topic?topic=dashboard-pages&offset=abc")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("offset must be a whole number, but was 'abc'");
		this.client.get()
			.uri("/api/topic?topic=dashboard-pages&state=lost")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.value((error) -> assertThat((String) error).contains("lost"));
	}

	@Test
	void aReadOnlyDashboardRefusesActionsAndChangesNothing() {
		this.template
			.send(DelayMessage.builder("dashboard-read-only", "x").id("kept").delay(Duration.ofHours(1)).build());
		this.client.post()
			.uri("/api/message/actions?topic=dashboard-read-only&id=kept")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel"))
			.exchange()
			.expectStatus()
			.isForbidden()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("The dashboard is read-only: the delayqueue endpoint's access is read-only "
					+ "(management.endpoint.delayqueue.access=unrestricted allows actions)");
		this.client.post()
			.uri("/api/topic/actions?topic=dashboard-read-only")
			.header(CrossSiteRequestGuard.HEADER, "1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "purge-dead"))
			.exchange()
			.expectStatus()
			.isForbidden();
		this.client.get()
			.uri("/api/message?topic=dashboard-read-only&id=kept")
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
