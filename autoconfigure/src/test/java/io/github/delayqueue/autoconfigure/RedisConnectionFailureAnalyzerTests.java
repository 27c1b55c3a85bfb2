package io.github.delayqueue.autoconfigure;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;

import io.github.delayqueue.listener.DelayListener;
import io.lettuce.core.RedisConnectionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * {@link RedisConnectionFailureAnalyzer}: an application that cannot reach Redis at
 * startup is told which address was tried and which {@code spring.data.redis.*}
 * properties set it.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisConnectionFailureAnalyzerTests {

	private static final RedisConnectionFailureException FAILURE = new RedisConnectionFailureException(
			"Unable to connect to Redis",
			new RedisConnectionException("Unable to connect to redis.example/<unresolved>:6390",
					new ConnectException("Connection refused")));

	@Test
	void startupWithoutRedisIsExplainedWithTheAddressTriedAndThePropertiesToSet(CapturedOutput output)
			throws IOException {
		int port = closedPort();
		SpringApplication application = new SpringApplication(ListenerApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--spring.data.redis.port=" + port))
			.withRootCauseInstanceOf(ConnectException.class);
		assertThat(output).contains("APPLICATION FAILED TO START",
				"Could not connect to Redis at localhost:" + port + ", set by spring.data.redis.host and"
						+ " spring.data.redis.port",
				"spring.data.redis.url", "spring.data.redis.cluster.nodes", "spring.data.redis.sentinel.master",
				"spring.data.redis.sentinel.nodes", "Start Redis at localhost:" + port);
	}

	@Test
	void unsetHostAndPortAreNamedAsTheDefaults() {
		assertThat(analyze(new MockEnvironment()).getDescription())
			.contains("Redis at localhost:6379, set by spring.data.redis.host and spring.data.redis.port (both unset");
	}

	@Test
	void aUrlIsNamedByHostAndPortWithoutItsCredentials() {
		FailureAnalysis analysis = analyze(
				new MockEnvironment().withProperty("spring.data.redis.url", "redis://app:s3cret@redis.example:6390/2"));
		assertThat(analysis.getDescription()).contains("Redis at redis.example:6390, set by spring.data.redis.url")
			.doesNotContain("s3cret");
		assertThat(analysis.getAction()).doesNotContain("s3cret");
	}

	@Test
	void clusterNodesAreNamed() {
		assertThat(analyze(new MockEnvironment().withProperty("spring.data.redis.cluster.nodes", "r1:7000,r2:7001"))
			.getDescription())
			.contains("Redis at the cluster nodes r1:7000, r2:7001, set by spring.data.redis.cluster.nodes");
	}

	@Test
	void sentinelNodesAndMasterAreNamed() {
		assertThat(analyze(new MockEnvironment().withProperty("spring.data.redis.sentinel.master", "primary")
			.withProperty("spring.data.redis.sentinel.nodes", "s1:26379,s2:26379")
			.withProperty("spring.data.redis.host", "ignored.example")).getDescription())
			.contains("Redis at the Sentinel nodes s1:26379, s2:26379 (master 'primary'), set by"
					+ " spring.data.redis.sentinel.nodes and spring.data.redis.sentinel.master");
	}

	@Test
	void failuresWithoutARedisConnectionFailureAreLeftToOtherAnalyzers() {
		assertThat(new RedisConnectionFailureAnalyzer(new MockEnvironment())
			.analyze(new IllegalStateException("something else"))).isNull();
	}

	private static FailureAnalysis analyze(MockEnvironment environment) {
		FailureAnalysis analysis = new RedisConnectionFailureAnalyzer(environment)
			.analyze(new IllegalStateException("Failed to start bean", FAILURE));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription())
			.contains(": Unable to connect to redis.example/<unresolved>:6390 (Connection refused).");
		return analysis;
	}

	/** A loopback port nothing listens on. */
	static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	/** An application with one listener, on the auto-configuration. */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			DelayQueueAutoConfiguration.class })
	static class ListenerApplication {

		@Bean
		NoteListener noteListener() {
			return new NoteListener();
		}

	}

	static class NoteListener {

		@DelayListener(topic = "notes")
		void on(String payload) {
		}

	}

}
