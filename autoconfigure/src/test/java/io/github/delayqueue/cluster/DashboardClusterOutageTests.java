package io.github.delayqueue.cluster;

import java.time.Duration;

import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import io.github.delayqueue.testsupport.QueueContexts;
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
 * The Redis panel on a Cluster one of whose three primaries is killed, with Spring Boot's
 * default timeouts (the Redis client's is a minute): it still answers, with the dead
 * primary marked and the others read.
 */
@Tag("cluster")
class DashboardClusterOutageTests {

	@Test
	void aKilledPrimaryIsMarkedWhileTheOthersAreStillRead() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary to start a cluster with");
		try (TestRedisCluster cluster = TestRedisCluster.start(3, 0, Duration.ofSeconds(2));
				ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
					.properties("server.port=0", "delay-queue.dashboard.enabled=true",
							"delay-queue.key-prefix=" + QueueContexts.uniquePrefix())
					.properties(cluster.springProperties())
					.run()) {
			RestTestClient client = RestTestClient.bindToServer()
				.baseUrl("http://localhost:" + context.getEnvironment().getProperty("local.server.port")
						+ "/delay-queue")
				.build();
			client.get().uri("/api/redis").exchange().expectStatus().isOk();
			RedisServerProcess killed = cluster.primaries().get(1);
			killed.stop();
			String address = ":" + killed.port();
			for (int i = 0; i < 2; i++) {
				client.get()
					.uri("/api/redis")
					.exchange()
					.expectStatus()
					.isOk()
					.expectBody()
					.jsonPath("$.primaries.length()")
					.isEqualTo(3)
					.jsonPath("$.primaries[?(@.address =~ /.*" + address + "/)].error")
					.isNotEmpty()
					.jsonPath("$.primaries[?(@.error == null)].version")
					.value((versions) -> assertThat(versions).asList().hasSize(2));
			}
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
