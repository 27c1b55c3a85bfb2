package io.github.delayqueue.cluster;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import io.github.delayqueue.testsupport.QueueContexts;
import io.lettuce.core.cluster.SlotHash;
import io.github.delayqueue.test.browser.Chromium;
import io.micrometer.core.instrument.MeterRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.slf4j.LoggerFactory;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What an operator sees of a Cluster of three primaries without replicas when one of them
 * is killed (issue 36, items 6 to 8): a topic {@code orders} in three partitions, one on
 * each primary, and two topics of one partition, {@code payments} on the killed primary
 * and {@code reminders} on another, the recurring schedules' registry on the killed
 * primary too. One Cluster and one application serve every check: the endpoint's overview
 * and topic reads, the health, the dashboard (its API and, when Chromium is installed,
 * its pages), the gauges and the logs show what the live primaries hold and name the dead
 * primary with its partitions, each read within the store's timeout (1 s here) and some
 * slack, rather than the Redis client's minute.
 */
@Tag("cluster")
class ClusterOutageOperationsTests {

	private static final String PARTITIONED = "orders";

	private static final String DOWN_TOPIC = "payments";

	private static final String LIVE_TOPIC = "reminders";

	private static TestRedisCluster cluster;

	private static ConfigurableApplicationContext context;

	private static RedisServerProcess down;

	private static RestTestClient client;

	/**
	 * The longest an endpoint read may take: the store's timeout (1 s) and slack for a
	 * busy machine, far below the Redis client's own timeout (a minute), which the reads
	 * once waited for.
	 */
	private static final Duration BOUND = Duration.ofSeconds(10);

	private static int ordersOnDeadPartition;

	/** What the application logs from the kill on. */
	private static final List<String> logged = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void startAndKillAPrimary() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary to start a cluster with");
		cluster = TestRedisCluster.start(3, 0, Duration.ofSeconds(1));
		cluster.primaries()
			.forEach((primary) -> primary.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
		down = cluster.primaryOf(SlotHash.getSlot(DOWN_TOPIC));
		assertThat(cluster.primaryOf(SlotHash.getSlot(LIVE_TOPIC))).isNotSameAs(down);
		// A key prefix whose schedule registry is on the primary to kill, as any may be.
		String prefix = QueueContexts.uniquePrefix();
		while (cluster.primaryOf(SlotHash.getSlot(TopicKeys.scheduleRegistry(prefix))) != down) {
			prefix = QueueContexts.uniquePrefix();
		}
		context = new SpringApplicationBuilder(App.class)
			.properties("server.port=0", "delay-queue.dashboard.enabled=true", "delay-queue.key-prefix=" + prefix,
					"delay-queue.topics." + PARTITIONED + ".partitions=3", "delay-queue.producer.send-timeout=1s",
					"management.endpoints.web.exposure.include=health,delayqueue",
					"management.endpoint.health.show-details=always")
			.properties(cluster.springProperties())
			.run();
		DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
		for (int i = 0; i < 30; i++) {
			template.send(DelayMessage.builder(PARTITIONED, "o").id("order-" + i).delay(Duration.ofHours(1)).build());
		}
		template.send(DelayMessage.builder(DOWN_TOPIC, "p").id("payment-1").delay(Duration.ofHours(1)).build());
		template.send(DelayMessage.builder(LIVE_TOPIC, "r").id("reminder-1").delay(Duration.ofHours(1)).build());
		client = RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + context.getEnvironment().getProperty("local.server.port"))
			.build();
		List<String> partitions = TopicPartitions.names(PARTITIONED, 3);
		assertThat(partitions.stream().filter((partition) -> cluster.primaryOf(SlotHash.getSlot(partition)) == down))
			.as("partitions of %s on the primary to kill", PARTITIONED)
			.hasSize(1);
		TopicPartitions counts = TopicPartitions.of(Map.of(PARTITIONED, 3));
		ordersOnDeadPartition = (int) IntStream.range(0, 30)
			.filter((i) -> cluster.primaryOf(SlotHash.getSlot(counts.nameFor(PARTITIONED, "order-" + i))) == down)
			.count();
		LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
		AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {

			@Override
			protected void append(ILoggingEvent event) {
				logged.add(event.getFormattedMessage());
			}

		};
		appender.setContext(logging);
		appender.start();
		logging.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(appender);
		down.stop();
	}

	@AfterAll
	static void stop() {
		if (context != null) {
			context.close();
		}
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void theEndpointOverviewCountsWhatAnswersAndNamesTheDeadPrimaryAndItsPartitions() {
		String address = address(down);
		String orders = deadPartitionOfOrders();
		long start = System.nanoTime();
		client.get()
			.uri("/actuator/delayqueue")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.topics.reminders.scheduled")
			.isEqualTo(1)
			.jsonPath("$.topics.orders.scheduled")
			.isEqualTo(30 - ordersOnDeadPartition)
			.jsonPath("$.topics.orders.unreachable['" + orders + "']")
			.value((text) -> assertThat((String) text).contains(address))
			.jsonPath("$.errors.payments")
			.value((text) -> assertThat((String) text).contains("payments").contains(address))
			.jsonPath("$.unreachable['" + address + "']")
			.value((text) -> assertThat((String) text).contains(orders).contains("payments"))
			.jsonPath("$.schedulesError")
			.value((text) -> assertThat((String) text).startsWith("The recurring schedules could not be read: "));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(BOUND);
	}

	@Test
	void aTopicReadShowsThePartitionsThatAnswerAndATopicOrMessageWithoutAnyNamesItsPrimary() {
		String address = address(down);
		client.get()
			.uri("/actuator/delayqueue/" + PARTITIONED)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.scheduled")
			.isEqualTo(30 - ordersOnDeadPartition)
			.jsonPath("$.page.messages.length()")
			.isEqualTo(20)
			.jsonPath("$.unreachable['" + deadPartitionOfOrders() + "']")
			.value((text) -> assertThat((String) text).contains(address));
		client.get()
			.uri("/actuator/delayqueue/" + DOWN_TOPIC + "/payment-1")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.value((text) -> assertThat((String) text).contains("partition 'payments' on primary " + address));
		client.get()
			.uri("/actuator/delayqueue/" + DOWN_TOPIC)
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.value((text) -> assertThat((String) text).contains("payments").contains(address).doesNotContain("null"));
	}

	@Test
	void healthIsDownNamingThePrimaryAndItsPartitionsWithEachTopicsOwnStatus() {
		String address = address(down);
		client.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.components.delayQueue.status")
			.isEqualTo("DOWN")
			.jsonPath("$.components.delayQueue.details.unreachable['" + address + "']")
			.value((partitions) -> assertThat(partitions).asInstanceOf(InstanceOfAssertFactories.LIST)
				.contains(deadPartitionOfOrders(), DOWN_TOPIC))
			.jsonPath("$.components.delayQueue.details.error")
			.value((text) -> assertThat((String) text).contains(address))
			.jsonPath("$.components.delayQueue.details.topics.reminders.status")
			.isEqualTo("UP")
			.jsonPath("$.components.delayQueue.details.topics.reminders.scheduled")
			.isEqualTo(1)
			.jsonPath("$.components.delayQueue.details.topics.orders.status")
			.isEqualTo("DOWN")
			.jsonPath("$.components.delayQueue.details.topics.orders.scheduled")
			.isEqualTo(30 - ordersOnDeadPartition)
			.jsonPath("$.components.delayQueue.details.topics.payments.status")
			.isEqualTo("DOWN");
	}

	@Test
	void theDashboardShowsTheRestWithinItsTimeoutAndTheGaugesCountThePartitionsThatAnswer() {
		String address = address(down);
		long start = System.nanoTime();
		client.get()
			.uri("/delay-queue/api/overview")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.queue.topics.reminders.scheduled")
			.isEqualTo(1)
			.jsonPath("$.queue.unreachable['" + address + "']")
			.exists();
		client.get()
			.uri("/delay-queue/api/topic?topic=" + PARTITIONED)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.scheduled")
			.isEqualTo(30 - ordersOnDeadPartition);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(BOUND);
		MeterRegistry meters = context.getBean(MeterRegistry.class);
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(
					meters.get("delay.queue.messages").tags("topic", PARTITIONED, "state", "scheduled").gauge().value())
				.isEqualTo(30 - ordersOnDeadPartition));
	}

	@Test
	void theLogsNameThePartitionsAndThePrimaryThatDoNotAnswer() {
		String address = address(down);
		String orders = deadPartitionOfOrders();
		// Read as a dashboard does, every few seconds: said at WARN once, not at each
		// read.
		for (int read = 0; read < 3; read++) {
			client.get().uri("/actuator/delayqueue").exchange().expectStatus().isOk();
		}
		assertThat(
				logged.stream().filter((line) -> line.startsWith("delayqueue endpoint: Redis servers did not answer")))
			.hasSize(1);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(String.join("\n", logged))
				.contains("Redis unavailable for listener of topic 'orders' (partition '" + orders + "', on primary "
						+ address + ")")
				.contains("Redis unavailable for listener of topic 'payments' (on primary " + address + ")")
				.contains("delayqueue endpoint: Redis servers did not answer"));
	}

	@Test
	@Tag("browser")
	void theDashboardInChromiumNamesTheDeadPrimaryAndShowsTheOtherTopics() throws Exception {
		Chromium chromium = new Chromium();
		chromium.beforeEach(null);
		chromium.beforeAll(null);
		try {
			String port = context.getEnvironment().getProperty("local.server.port");
			chromium.open(Integer.parseInt(port), "/delay-queue/");
			String address = address(down);
			assertThat(chromium.textOf(By.id("unreachable"))).contains(address);
			assertThat(chromium.textOf(By.cssSelector("tr[data-topic='reminders']"))).contains("reminders");
			assertThat(chromium.textOf(By.cssSelector("tr[data-topic='orders'] .unreachable")))
				.isEqualTo("1 of 3 partitions did not answer");
			assertThat(chromium.textOf(By.id("primaries"))).contains(address);
			assertThat(chromium.textOf(By.id("schedules-error")))
				.startsWith("The recurring schedules could not be read: ");
			chromium.screenshot("cluster-outage-overview");
			chromium.open(Integer.parseInt(port), "/delay-queue/#/topics/orders");
			assertThat(chromium.textOf(By.id("unreachable"))).contains(deadPartitionOfOrders()).contains(address);
			chromium.shown(By.cssSelector("table#messages tbody tr"));
			assertThat(chromium.driver().findElements(By.cssSelector("table#messages tbody tr"))).hasSize(20);
			chromium.screenshot("cluster-outage-topic");
		}
		finally {
			chromium.afterAll(null);
		}
	}

	private static String address(RedisServerProcess server) {
		return server.host() + ":" + server.port();
	}

	/** The partition of {@code orders} on the killed primary. */
	private static String deadPartitionOfOrders() {
		return TopicPartitions.names(PARTITIONED, 3)
			.stream()
			.filter((partition) -> cluster.primaryOf(SlotHash.getSlot(partition)) == null)
			.findFirst()
			.orElseThrow();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@DelayListener(topic = PARTITIONED)
		void onOrder(Delivery<String> delivery) {
		}

		@DelayListener(topic = DOWN_TOPIC)
		void onPayment(Delivery<String> delivery) {
		}

		@DelayListener(topic = LIVE_TOPIC)
		void onReminder(Delivery<String> delivery) {
		}

	}

}
