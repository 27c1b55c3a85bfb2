package io.github.delayqueue.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code delayqueue} endpoint over HTTP, in a web application on the test Redis with
 * write access granted: every read and write operation, and the {@code delayQueue} health
 * contributor in {@code /actuator/health}.
 */
@SpringBootTest(classes = DelayQueueEndpointTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,delayqueue",
				"management.endpoint.delayqueue.access=unrestricted", "management.endpoint.health.show-details=always",
				"delay-queue.listener.idle-check-interval=500ms", "delay-queue.broker.max-sleep=500ms",
				"delay-queue.listener.shutdown-timeout=2s" })
class DelayQueueEndpointTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private RedisMessageStore store;

	@Autowired
	private EchoListener echo;

	@Autowired
	private RedisConnectionFactory connectionFactory;

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
	void overviewListsTopicsWithAListenerHereAndTopicsFoundInRedisWithTheirCounts() {
		String topic = uniqueTopic();
		SendResult first = this.template.send(topic, "a", Duration.ofHours(1));
		this.template.send(topic, "b", Duration.ofHours(2));
		deadLetters(topic, 1);

		JsonNode queue = get("/delayqueue");
		assertThat(queue.path("prefix").asString()).isEqualTo(PREFIX);
		assertThat(Instant.parse(queue.path("time").asString())).isAfter(Instant.EPOCH);
		JsonNode found = queue.path("topics").path(topic);
		assertThat(found.path("scheduled").asLong()).isEqualTo(2);
		assertThat(found.path("ready").asLong()).isZero();
		assertThat(found.path("inFlight").asLong()).isZero();
		assertThat(found.path("dead").asLong()).isEqualTo(1);
		assertThat(Instant.parse(found.path("nextDue").asString())).isEqualTo(first.dueAt());
		assertThat(found.path("oldestLateness").asString()).isEqualTo("PT0S");
		assertThat(found.has("listener")).isFalse();

		JsonNode echoTopic = queue.path("topics").path("echo");
		assertThat(echoTopic.isMissingNode()).isFalse();
		assertThat(echoTopic.path("listener").path("method").asString()).endsWith("EchoListener.on");
		assertThat(echoTopic.path("listener").path("state").asString()).isEqualTo("running");
		assertThat(echoTopic.path("listener").path("concurrency").asInt()).isEqualTo(2);
		assertThat(echoTopic.path("listener").path("maxAttempts").asInt()).isEqualTo(5);
		assertThat(queue.has("truncated")).isFalse();
	}

	@Test
	void aKeyOfTheWrongTypeOrAMisnamedKeyUnderThePrefixIsReportedAndTheOtherTopicsAreShown() {
		String healthy = uniqueTopic();
		this.template.send(healthy, "a", Duration.ofHours(1));
		String wrongType = uniqueTopic();
		String misnamed = "not a topic " + UUID.randomUUID().toString().substring(0, 8);
		StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
		String wrongTypeKey = this.store.keys(wrongType).messages();
		String misnamedKey = PREFIX + ":{" + misnamed + "}:z";
		redis.opsForValue().set(wrongTypeKey, "another application's value");
		redis.opsForZSet().add(misnamedKey, "x", 1);
		try {
			JsonNode queue = get("/delayqueue");
			assertThat(queue.path("topics").path(healthy).path("scheduled").asLong()).isEqualTo(1);
			assertThat(queue.path("topics").has(wrongType)).isFalse();
			assertThat(queue.path("errors").path(wrongType).asString()).contains("wrong Redis type")
				.contains("WRONGTYPE");
			assertThat(queue.path("topics").has(misnamed)).isFalse();
			assertThat(queue.path("errors").path(misnamed).asString()).contains("name no usable topic")
				.contains("must not contain whitespace");
		}
		finally {
			redis.delete(List.of(wrongTypeKey, misnamedKey));
		}
	}

	@Test
	void aHugeStoredValueIsNeitherReadNorReturnedButShownWithItsSizeAsTooLarge() {
		String topic = uniqueTopic();
		SendResult sent = this.template.send(topic, "small", Duration.ofHours(1));
		byte[] huge = new byte[30 * 1024 * 1024];
		Arrays.fill(huge, (byte) 'x');
		byte[] header = ("0:" + sent.dueAt().toEpochMilli() + ":").getBytes(StandardCharsets.US_ASCII);
		System.arraycopy(header, 0, huge, 0, header.length);
		String messages = this.store.keys(topic).messages();
		this.connectionFactory.getConnection()
			.hashCommands()
			.hSet(messages.getBytes(StandardCharsets.UTF_8), sent.id().getBytes(StandardCharsets.UTF_8), huge);

		MessageSnapshot snapshot = this.store.inspector(topic).inspect(sent.id(), 4096);
		assertThat(snapshot).isNotNull();
		assertThat(snapshot.storedLength()).isEqualTo(huge.length);
		assertThat(snapshot.storedPrefix()).isEmpty();
		assertThat(snapshot.tooLongToRead()).isTrue();

		String body = this.client.get()
			.uri("/delayqueue/{topic}/{id}", topic, sent.id())
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(body).hasSizeLessThan(4096);
		JsonNode message = JSON.readTree(body);
		assertThat(message.path("state").asString()).isEqualTo("scheduled");
		assertThat(message.path("payloadSize").asLong()).isEqualTo(huge.length);
		assertThat(message.path("tooLong").asString()).contains(huge.length + " bytes").contains("too large to show");
		assertThat(message.has("payload")).isFalse();

		JsonNode page = get("/delayqueue/" + topic + "?state=scheduled");
		assertThat(page.path("page").path("messages").get(0).path("id").asString()).isEqualTo(sent.id());
		assertThat(page.path("page").path("messages").get(0).has("attempts")).isFalse();
	}

	@Test
	void aTopicSpreadOverAnotherNumberOfPartitionsInRedisIsReportedInsteadOfCountedWrong() {
		String topic = uniqueTopic();
		RedisMessageStore three = new RedisMessageStore(this.connectionFactory, PREFIX);
		three.usePartitions(TopicPartitions.of(Map.of(topic, 3)));
		three.send(topic,
				List.of(NewMessage.afterDelay("m1", Duration.ofHours(1), "body".getBytes(StandardCharsets.UTF_8))));

		JsonNode queue = get("/delayqueue");
		assertThat(queue.path("topics").has(topic)).isFalse();
		assertThat(queue.path("errors").path(topic).asString()).contains("has 3 partitions in Redis, but 1 are");
		this.client.get().uri("/delayqueue/{topic}", topic).exchange().expectStatus().isBadRequest();
		this.client.get().uri("/delayqueue/{topic}/m1", topic).exchange().expectStatus().isBadRequest();
		this.client.delete().uri("/delayqueue/{topic}/m1", topic).exchange().expectStatus().isBadRequest();
		assertThat(three.inspect(topic, "m1", 10)).isNotNull();
	}

	@Test
	void topicShowsItsCountsAndAPageOfScheduledMessagesByOffsetAndLimit() {
		String topic = uniqueTopic();
		List<SendResult> sent = new ArrayList<>();
		for (int i = 1; i <= 5; i++) {
			sent.add(this.template
				.send(DelayMessage.builder(topic, "p" + i).id("m" + i).delay(Duration.ofMinutes(60 + i)).build()));
		}
		JsonNode result = get("/delayqueue/{topic}?state=scheduled&offset=1&limit=2", topic);
		assertThat(result.path("topic").asString()).isEqualTo(topic);
		assertThat(result.path("scheduled").asLong()).isEqualTo(5);
		JsonNode page = result.path("page");
		assertThat(page.path("state").asString()).isEqualTo("scheduled");
		assertThat(page.path("offset").asLong()).isEqualTo(1);
		assertThat(page.path("limit").asInt()).isEqualTo(2);
		assertThat(page.path("total").asLong()).isEqualTo(5);
		assertThat(ids(page)).containsExactly("m2", "m3");
		JsonNode second = page.path("messages").get(0);
		assertThat(Instant.parse(second.path("due").asString())).isEqualTo(sent.get(1).dueAt());
		assertThat(second.path("attempts").asInt()).isZero();
		assertThat(second.has("lastError")).isFalse();
	}

	@Test
	void topicShowsScheduledMessagesUnlessAnotherStateIsAsked() {
		String topic = uniqueTopic();
		this.template.send(DelayMessage.builder(topic, "x").id("s1").delay(Duration.ofHours(1)).build());
		JsonNode page = get("/delayqueue/{topic}", topic).path("page");
		assertThat(page.path("state").asString()).isEqualTo("scheduled");
		assertThat(page.path("limit").asInt()).isEqualTo(DelayQueueEndpoint.DEFAULT_PAGE_SIZE);
		assertThat(ids(page)).containsExactly("s1");
	}

	@Test
	void topicThatUsesPrioritiesShowsItsReadyMessagesByPriorityAndPagesThemUrgentFirst() {
		String topic = uniqueTopic();
		this.template.send(DelayMessage.builder(topic, "x").id("routine").build());
		this.template.send(DelayMessage.builder(topic, "x").id("urgent").priority(9).build());
		Transitions.promote(this.store, topic, 1000);
		JsonNode result = get("/delayqueue/{topic}?state=ready", topic);
		assertThat(result.path("ready").asLong()).isEqualTo(2);
		assertThat(result.path("readyByPriority").path("0").asLong()).isEqualTo(1);
		assertThat(result.path("readyByPriority").path("9").asLong()).isEqualTo(1);
		assertThat(ids(result.path("page"))).containsExactly("urgent", "routine");
		assertThat(get("/delayqueue/{topic}/{id}", topic, "urgent").path("priority").asInt()).isEqualTo(9);
		assertThat(get("/delayqueue/{topic}/{id}", topic, "routine").path("priority").asInt()).isZero();
		JsonNode plain = get("/delayqueue/{topic}", uniqueTopic());
		assertThat(plain.has("readyByPriority")).isFalse();
	}

	@Test
	void aMessageOfAGroupShowsItsGroupAndIsListedAmongTheReadyOnes() {
		String topic = uniqueTopic();
		this.template.send(DelayMessage.builder(topic, "x").id("plain").build());
		this.template.send(DelayMessage.builder(topic, "x").id("webhook").group("shop-17").build());
		Transitions.promote(this.store, topic, 1000);
		JsonNode result = get("/delayqueue/{topic}?state=ready", topic);
		assertThat(result.path("ready").asLong()).isEqualTo(2);
		assertThat(ids(result.path("page"))).containsExactly("plain", "webhook");
		assertThat(get("/delayqueue/{topic}/{id}", topic, "webhook").path("group").asText()).isEqualTo("shop-17");
		assertThat(get("/delayqueue/{topic}/{id}", topic, "plain").has("group")).isFalse();
		assertThat(result.path("groupsWithReady").asLong()).isOne();
		assertThat(result.path("busiestGroups").path("shop-17").asLong()).isOne();
		assertThat(get("/delayqueue/{topic}", uniqueTopic()).has("busiestGroups")).isFalse();
	}

	@Test
	void aGroupIsReadByNameWithItsCountsItsLimitAndItsNextReadyIdsAndTheBusiestInFlightAreNamed() {
		String topic = uniqueTopic();
		IntStream.range(0, 4)
			.forEach((i) -> this.template
				.send(DelayMessage.builder(topic, "x").id("shop-" + i).group("shop-17").build()));
		this.template.send(DelayMessage.builder(topic, "x").id("other").group("shop-18").build());
		Transitions.promote(this.store, topic, 1000);
		String consumer = "group-reader";
		assertThat(
				Transitions.claim(this.store, topic, consumer, consumer + ".1", 100, 0, Duration.ofMinutes(1), null, 2)
					.messages())
			.hasSize(3);
		JsonNode result = get("/delayqueue/{topic}?group={group}", topic, "shop-17");
		JsonNode group = result.path("group");
		assertThat(group.path("name").asString()).isEqualTo("shop-17");
		assertThat(group.path("ready").asLong()).isEqualTo(2);
		assertThat(group.path("inFlight").asLong()).isEqualTo(2);
		assertThat(group.path("waitingAtLimit").asBoolean()).isTrue();
		List<String> firstReady = new ArrayList<>();
		group.path("firstReady").forEach((id) -> firstReady.add(id.asString()));
		assertThat(firstReady).containsExactly("shop-2", "shop-3");
		assertThat(result.path("busiestInFlight").path("shop-17").asLong()).isEqualTo(2);
		assertThat(result.path("busiestInFlight").path("shop-18").asLong()).isOne();
		assertThat(get("/delayqueue/{topic}", topic).has("group")).isFalse();
		JsonNode unknown = get("/delayqueue/{topic}?group={group}", topic, "nobody").path("group");
		assertThat(unknown.path("ready").asLong()).isZero();
		assertThat(unknown.path("waitingAtLimit").asBoolean()).isFalse();
		assertThat(unknown.path("firstReady").isEmpty()).isTrue();
		assertThat(get("/delayqueue/{topic}", uniqueTopic()).has("busiestInFlight")).isFalse();
	}

	@Test
	void aGroupNameNoMessageCanHaveIsABadRequest() {
		this.client.get()
			.uri("/delayqueue/{topic}?group={group}", uniqueTopic(), "x".repeat(NewMessage.MAX_GROUP_LENGTH + 1))
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	@Test
	void pageLimitIsLoweredToTheMaximumPageSize() {
		String topic = uniqueTopic();
		JsonNode page = get("/delayqueue/{topic}?state=in-flight&limit=100000", topic).path("page");
		assertThat(page.path("limit").asInt()).isEqualTo(DelayQueueEndpoint.MAX_PAGE_SIZE);
		assertThat(page.path("total").asLong()).isZero();
	}

	@Test
	void unknownStateOrNegativeOffsetIsABadRequest() {
		this.client.get().uri("/delayqueue/{topic}?state=lost", "orders").exchange().expectStatus().isBadRequest();
		this.client.get().uri("/delayqueue/{topic}?offset=-1", "orders").exchange().expectStatus().isBadRequest();
	}

	@Test
	void topicNameThatCannotBeATopicIsABadRequest() {
		this.client.get().uri("/delayqueue/{topic}", "a{b}").exchange().expectStatus().isBadRequest();
	}

	@Test
	void deadLettersOfAListenerThatFailsShowAttemptsTimeOfDeathAndLastError() {
		String id = "f-" + UUID.randomUUID();
		this.template.send(DelayMessage.builder("failing", "doomed").id(id).build());
		await().atMost(Duration.ofSeconds(10)).until(() -> ids(page("failing", "dead")).contains(id));

		JsonNode dead = find(page("failing", "dead"), id);
		assertThat(dead.path("attempts").asInt()).isEqualTo(1);
		assertThat(dead.path("lastError").asString()).isEqualTo("java.lang.IllegalStateException: always fails");
		assertThat(Instant.parse(dead.path("deadSince").asString()))
			.isAfterOrEqualTo(Instant.parse(dead.path("due").asString()));

		JsonNode message = get("/delayqueue/{topic}/{id}", "failing", id);
		assertThat(message.path("state").asString()).isEqualTo("dead");
		assertThat(message.path("lastError").asString()).contains("always fails");
		assertThat(message.path("payload").asString()).isEqualTo("doomed");
	}

	@Test
	void messageShowsItsStateDueTimeAttemptsHeadersAndPayload() {
		String topic = uniqueTopic();
		SendResult sent = this.template.send(DelayMessage.builder(topic, Map.of("orderId", "o-1"))
			.id("m1")
			.delay(Duration.ofHours(1))
			.header("tenant", "acme")
			.build());
		JsonNode message = get("/delayqueue/{topic}/{id}", topic, "m1");
		assertThat(message.path("topic").asString()).isEqualTo(topic);
		assertThat(message.path("id").asString()).isEqualTo("m1");
		assertThat(message.path("state").asString()).isEqualTo("scheduled");
		assertThat(Instant.parse(message.path("due").asString())).isEqualTo(sent.dueAt());
		assertThat(message.path("attempts").asInt()).isZero();
		assertThat(message.path("headers").path("tenant").asString()).isEqualTo("acme");
		assertThat(message.path("payload").asString()).isEqualTo("{\"orderId\":\"o-1\"}");
		assertThat(message.path("payloadSize").asLong()).isEqualTo(17);
		assertThat(message.path("payloadTruncated").asBoolean()).isFalse();
		assertThat(message.has("payloadBase64")).isFalse();
		assertThat(message.has("corrupt")).isFalse();
	}

	@Test
	void largePayloadIsShownUpToItsFirstFourKibibytes() {
		String topic = uniqueTopic();
		this.template
			.send(DelayMessage.builder(topic, "é".repeat(10_000)).id("big").delay(Duration.ofHours(1)).build());
		JsonNode message = get("/delayqueue/{topic}/{id}", topic, "big");
		assertThat(message.path("payloadSize").asLong()).isEqualTo(20_000);
		assertThat(message.path("payloadTruncated").asBoolean()).isTrue();
		assertThat(message.path("payload").asString()).isEqualTo("é".repeat(DelayQueueEndpoint.MAX_PAYLOAD_BYTES / 2));
	}

	@Test
	void payloadThatIsNotTextIsShownInBase64() {
		String topic = uniqueTopic();
		byte[] payload = { (byte) 0xff, (byte) 0xfe, 0, 1 };
		this.template.send(DelayMessage.builder(topic, payload).id("bin").delay(Duration.ofHours(1)).build());
		JsonNode message = get("/delayqueue/{topic}/{id}", topic, "bin");
		assertThat(message.has("payload")).isFalse();
		assertThat(Base64.getDecoder().decode(message.path("payloadBase64").asString())).isEqualTo(payload);
	}

	@Test
	void unknownMessageIsNotFound() {
		this.client.get().uri("/delayqueue/{topic}/{id}", uniqueTopic(), "nope").exchange().expectStatus().isNotFound();
	}

	@Test
	void deleteCancelsAPendingMessage() {
		String topic = uniqueTopic();
		this.template.send(DelayMessage.builder(topic, "x").id("m1").delay(Duration.ofHours(1)).build());
		JsonNode result = this.json(this.client.delete().uri("/delayqueue/{topic}/{id}", topic, "m1").exchange());
		assertThat(result.path("action").asString()).isEqualTo("cancel");
		assertThat(result.path("affected").asLong()).isEqualTo(1);
		this.client.get().uri("/delayqueue/{topic}/{id}", topic, "m1").exchange().expectStatus().isNotFound();

		JsonNode again = this.json(this.client.delete().uri("/delayqueue/{topic}/{id}", topic, "m1").exchange());
		assertThat(again.path("affected").asLong()).isZero();
	}

	@Test
	void rescheduleGivesAPendingMessageANewDueTime() {
		String topic = uniqueTopic();
		SendResult sent = this.template
			.send(DelayMessage.builder(topic, "x").id("m1").delay(Duration.ofHours(1)).build());
		JsonNode result = post("/delayqueue/{topic}/{id}", Map.of("action", "reschedule", "delay", "3h"), topic, "m1");
		assertThat(result.path("affected").asLong()).isEqualTo(1);
		Instant due = Instant.parse(get("/delayqueue/{topic}/{id}", topic, "m1").path("due").asString());
		assertThat(due).isAfter(sent.dueAt());
	}

	@Test
	void rescheduleWithoutADelayIsABadRequest() {
		String topic = uniqueTopic();
		this.template.send(DelayMessage.builder(topic, "x").id("m1").delay(Duration.ofHours(1)).build());
		this.client.post()
			.uri("/delayqueue/{topic}/{id}", topic, "m1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "reschedule"))
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	@Test
	void replayOfOneDeadLetterSchedulesItDueNowWithAttemptsReset() {
		String topic = uniqueTopic();
		deadLetters(topic, 2);
		JsonNode result = post("/delayqueue/{topic}/{id}", Map.of("action", "replay"), topic, "d0001");
		assertThat(result.path("affected").asLong()).isEqualTo(1);

		JsonNode message = get("/delayqueue/{topic}/{id}", topic, "d0001");
		assertThat(message.path("state").asString()).isEqualTo("scheduled");
		assertThat(message.path("attempts").asInt()).isZero();
		assertThat(message.has("lastError")).isFalse();
		JsonNode counts = get("/delayqueue/{topic}", topic);
		assertThat(counts.path("dead").asLong()).isEqualTo(1);
		assertThat(counts.path("scheduled").asLong()).isEqualTo(1);

		JsonNode again = post("/delayqueue/{topic}/{id}", Map.of("action", "replay"), topic, "d0001");
		assertThat(again.path("affected").asLong()).isZero();
	}

	@Test
	void replayDeadReplaysEveryDeadLetterOfATopicInBatches() {
		String topic = uniqueTopic();
		deadLetters(topic, 2 * DelayQueueEndpoint.BATCH_SIZE + 50);
		JsonNode limited = post("/delayqueue/{topic}", Map.of("action", "replay-dead", "limit", 10), topic);
		assertThat(limited.path("affected").asLong()).isEqualTo(10);

		JsonNode result = post("/delayqueue/{topic}", Map.of("action", "replay-dead"), topic);
		assertThat(result.path("affected").asLong()).isEqualTo(2 * DelayQueueEndpoint.BATCH_SIZE + 40);
		JsonNode counts = get("/delayqueue/{topic}", topic);
		assertThat(counts.path("dead").asLong()).isZero();
		assertThat(counts.path("scheduled").asLong()).isEqualTo(2 * DelayQueueEndpoint.BATCH_SIZE + 50);
	}

	@Test
	void purgeDeadDeletesTheDeadLettersOfATopicInBatches() {
		String topic = uniqueTopic();
		deadLetters(topic, DelayQueueEndpoint.BATCH_SIZE + 50);
		JsonNode limited = post("/delayqueue/{topic}", Map.of("action", "purge-dead", "limit", 120), topic);
		assertThat(limited.path("affected").asLong()).isEqualTo(120);
		assertThat(ids(page(topic, "dead")).get(0)).isEqualTo("d0120");

		JsonNode rest = post("/delayqueue/{topic}", Map.of("action", "purge-dead"), topic);
		assertThat(rest.path("affected").asLong()).isEqualTo(30);
		assertThat(get("/delayqueue/{topic}", topic).path("dead").asLong()).isZero();
	}

	@Test
	void purgeOfOneMessageDeletesOnlyADeadLetter() {
		String topic = uniqueTopic();
		deadLetters(topic, 1);
		this.template.send(DelayMessage.builder(topic, "x").id("s1").delay(Duration.ofHours(1)).build());
		assertThat(post("/delayqueue/{topic}/{id}", Map.of("action", "purge"), topic, "s1").path("affected").asLong())
			.isZero();
		assertThat(
				post("/delayqueue/{topic}/{id}", Map.of("action", "purge"), topic, "d0000").path("affected").asLong())
			.isEqualTo(1);
		this.client.get().uri("/delayqueue/{topic}/{id}", topic, "d0000").exchange().expectStatus().isNotFound();
		assertThat(get("/delayqueue/{topic}/{id}", topic, "s1").path("state").asString()).isEqualTo("scheduled");
	}

	@Test
	void pausedListenerReceivesNothingUntilResumed() {
		JsonNode paused = post("/delayqueue/{topic}", Map.of("action", "pause"), "echo");
		try {
			assertThat(paused.path("affected").asLong()).isEqualTo(1);
			assertThat(get("/delayqueue").path("topics").path("echo").path("listener").path("state").asString())
				.isEqualTo("paused");
			String payload = "while paused " + UUID.randomUUID();
			this.template.send("echo", payload, Duration.ZERO);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> get("/delayqueue/{topic}", "echo").path("ready").asLong() == 1);
			await().during(Duration.ofSeconds(1))
				.atMost(Duration.ofSeconds(3))
				.until(() -> !this.echo.received.contains(payload));

			JsonNode resumed = post("/delayqueue/{topic}", Map.of("action", "resume"), "echo");
			assertThat(resumed.path("affected").asLong()).isEqualTo(1);
			await().atMost(Duration.ofSeconds(10)).until(() -> this.echo.received.contains(payload));
		}
		finally {
			post("/delayqueue/{topic}", Map.of("action", "resume"), "echo");
		}
	}

	@Test
	void pausingATopicWithoutAListenerHereIsABadRequest() {
		this.client.post()
			.uri("/delayqueue/{topic}", uniqueTopic())
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "pause"))
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	@Test
	void unknownActionIsABadRequest() {
		this.client.post()
			.uri("/delayqueue/{topic}", uniqueTopic())
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "explode"))
			.exchange()
			.expectStatus()
			.isBadRequest();
		this.client.post()
			.uri("/delayqueue/{topic}/{id}", uniqueTopic(), "m1")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("action", "explode"))
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	@Test
	void healthIncludesTheDelayQueueContributorWithItsTopics() {
		JsonNode health = get("/health");
		JsonNode delayQueue = health.path("components").path("delayQueue");
		assertThat(delayQueue.path("status").asString()).isEqualTo("UP");
		assertThat(delayQueue.path("details").path("topics").path("echo").path("listener").asString()).isIn("running",
				"paused");
		assertThat(delayQueue.path("details").path("topics").path("failing").isMissingNode()).isFalse();
	}

	private static String uniqueTopic() {
		return "ops." + UUID.randomUUID().toString().substring(0, 8);
	}

	/**
	 * Dead-letters {@code count} messages with ids d0000, d0001, ... (oldest first) in a
	 * topic without a listener.
	 */
	private void deadLetters(String topic, int count) {
		List<DelayMessage> messages = IntStream.range(0, count)
			.mapToObj((i) -> DelayMessage.builder(topic, "dead " + i).id(String.format("d%04d", i)).build())
			.toList();
		this.template.sendAll(messages);
		Transitions.promote(this.store, topic, 1000);
		List<ClaimedMessage> claimed = Transitions.claim(this.store, topic, count, Duration.ofMinutes(5));
		assertThat(claimed).hasSize(count);
		for (ClaimedMessage message : claimed) {
			Transitions.deadLetter(this.store, topic, message.id(), message.leaseToken(), "failed " + message.id());
		}
	}

	private JsonNode page(String topic, String state) {
		return get("/delayqueue/{topic}?state={state}&limit=100", topic, state).path("page");
	}

	private static List<String> ids(JsonNode page) {
		List<String> ids = new ArrayList<>();
		page.path("messages").forEach((message) -> ids.add(message.path("id").asString()));
		return ids;
	}

	private static JsonNode find(JsonNode page, String id) {
		for (JsonNode message : page.path("messages")) {
			if (message.path("id").asString().equals(id)) {
				return message;
			}
		}
		throw new AssertionError("No message " + id + " in " + page);
	}

	private JsonNode get(String uri, Object... variables) {
		return json(this.client.get().uri(uri, variables).exchange());
	}

	private JsonNode post(String uri, Map<String, ?> body, Object... variables) {
		return json(
				this.client.post().uri(uri, variables).contentType(MediaType.APPLICATION_JSON).body(body).exchange());
	}

	private JsonNode json(RestTestClient.ResponseSpec response) {
		String body = response.expectStatus().isEqualTo(HttpStatus.OK).returnResult(String.class).getResponseBody();
		return JSON.readTree(body);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		EchoListener echoListener() {
			return new EchoListener();
		}

		@Bean
		FailingListener failingListener() {
			return new FailingListener();
		}

	}

	static class EchoListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "echo", concurrency = "2")
		void on(String payload) {
			this.received.add(payload);
		}

	}

	static class FailingListener {

		@DelayListener(topic = "failing", maxAttempts = 1)
		void on(String payload) {
			throw new IllegalStateException("always fails");
		}

	}

}
