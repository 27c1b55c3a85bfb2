package io.github.delayqueue.cluster;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import io.github.delayqueue.testsupport.QueueContexts;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard on a Redis Cluster of three primaries: the overview lists the topics of
 * every primary, a partitioned topic spread over all three counts all its messages, a
 * message of each is found by id, and the Redis panel shows the three primaries.
 */
@Tag("cluster")
class DashboardClusterTests {

	private static final List<String> TOPICS = List.of("orders", "payments", "reminders");

	private static TestRedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary to start a cluster with");
		cluster = TestRedisCluster.start(3, 0, Duration.ofSeconds(2));
	}

	@AfterAll
	static void stopCluster() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void theOverviewListsTheTopicsOfEveryPrimaryFindsTheirMessagesAndShowsEachPrimary() {
		assertThat(TOPICS.stream().map((topic) -> cluster.primaryOf(SlotHash.getSlot(topic))).distinct()).hasSize(3);
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
			.properties("server.port=0", "delay-queue.dashboard.enabled=true",
					"delay-queue.key-prefix=" + QueueContexts.uniquePrefix(), "delay-queue.topics.spread.partitions=3")
			.properties(cluster.springProperties())
			.run()) {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			for (String topic : TOPICS) {
				template.send(DelayMessage.builder(topic, "x").id(topic + "-1").delay(Duration.ofHours(1)).build());
			}
			for (int i = 0; i < 9; i++) {
				template.send(DelayMessage.builder("spread", "s").id("spread-" + i).delay(Duration.ofHours(1)).build());
			}
			RestTestClient client = RestTestClient.bindToServer()
				.baseUrl("http://localhost:" + context.getEnvironment().getProperty("local.server.port")
						+ "/delay-queue")
				.build();
			client.get()
				.uri("/api/overview")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.queue.topics.orders.scheduled")
				.isEqualTo(1)
				.jsonPath("$.queue.topics.payments.scheduled")
				.isEqualTo(1)
				.jsonPath("$.queue.topics.reminders.scheduled")
				.isEqualTo(1)
				.jsonPath("$.queue.topics.spread.scheduled")
				.isEqualTo(9)
				.jsonPath("$.queue.topics.spread.partitions")
				.isEqualTo(3);
			for (String topic : TOPICS) {
				client.get()
					.uri("/api/message?topic={topic}&id={id}", topic, topic + "-1")
					.exchange()
					.expectStatus()
					.isOk();
			}
			client.get()
				.uri("/api/topic?topic=spread&limit=20")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.page.total")
				.isEqualTo(9);
			client.get()
				.uri("/api/redis")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.mode")
				.isEqualTo("cluster")
				.jsonPath("$.primaries.length()")
				.isEqualTo(3)
				.jsonPath("$.primaries[*].address")
				.value((addresses) -> assertThat(addresses).asString()
					.contains(cluster.primaries().stream().map((primary) -> ":" + primary.port()).toList()))
				.jsonPath("$.primaries[*].version")
				.value((versions) -> assertThat(versions).asString().doesNotContain("null"));
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
