package io.github.delayqueue.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The embedded-Redis switch, on an application without beans: it starts a Redis only when
 * none is configured, and stops it with the context.
 */
class EmbeddedRedisEnvironmentPostProcessorTests {

	@Test
	void withoutRedisConfiguredARedisIsStartedAndStoppedWithTheContext() throws IOException {
		int port;
		try (ConfigurableApplicationContext context = run()) {
			ConfigurableEnvironment environment = context.getEnvironment();
			assertThat(environment.getPropertySources()
				.contains(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME)).isTrue();
			assertThat(environment.getProperty("spring.data.redis.host")).isEqualTo("127.0.0.1");
			port = environment.getRequiredProperty("spring.data.redis.port", Integer.class);
			assertThat(ping(port)).isEqualTo("+PONG");
		}
		assertThatExceptionOfType(ConnectException.class).isThrownBy(() -> ping(port));
	}

	@ParameterizedTest
	@ValueSource(strings = { "--spring.data.redis.port=6390", "--spring.data.redis.host=redis.example",
			"--spring.data.redis.url=redis://redis.example:6390", "--spring.data.redis.sentinel.master=primary",
			"--spring.data.redis.cluster.nodes[0]=redis.example:7000" })
	void withRedisConfiguredNothingIsStarted(String argument) {
		try (ConfigurableApplicationContext context = run(argument)) {
			assertThat(context.getEnvironment()
				.getPropertySources()
				.contains(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME)).isFalse();
		}
	}

	private static ConfigurableApplicationContext run(String... args) {
		return new SpringApplicationBuilder(NoBeans.class).web(WebApplicationType.NONE).run(args);
	}

	private static String ping(int port) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", port);
				BufferedReader reader = new BufferedReader(
						new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))) {
			socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			return reader.readLine();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class NoBeans {

	}

}
