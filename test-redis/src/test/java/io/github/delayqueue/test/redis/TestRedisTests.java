package io.github.delayqueue.test.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Tests for {@link TestRedis} and {@link RedisServerProcess}.
 */
class TestRedisTests {

	@Test
	void sharedServerAnswersPing() throws IOException {
		assertThat(TestRedis.shared().command("PING")).isEqualTo("PONG");
	}

	@Test
	void sharedServerIsResolvedOnceEvenWhenAskedConcurrently() throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(8);
		try {
			List<Callable<TestRedis>> calls = Collections.nCopies(8, TestRedis::shared);
			for (Future<TestRedis> result : executor.invokeAll(calls)) {
				assertThat(result.get()).isSameAs(TestRedis.shared());
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void sharedServerReportsItsVersion() {
		assertThat(TestRedis.shared().version()).matches("\\d+\\.\\d+\\.\\d+");
	}

	@Test
	void springPropertiesPointAtTheSharedServer() throws IOException {
		TestRedis redis = TestRedis.shared();
		String runId = infoField(redis.command("INFO", "server"), "run_id");
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues(redis.springProperties())
			.run((context) -> {
				try (RedisConnection connection = context.getBean(RedisConnectionFactory.class).getConnection()) {
					Properties info = connection.serverCommands().info("server");
					assertThat(info).containsEntry("run_id", runId);
				}
			});
	}

	@Test
	void urlPointsAtTheSharedServer() {
		TestRedis redis = TestRedis.shared();
		TestRedis parsed = TestRedis.fromUrl(redis.url());
		assertThat(parsed.host()).isEqualTo(redis.host());
		assertThat(parsed.port()).isEqualTo(redis.port());
		assertThat(parsed.password()).isEqualTo(redis.password());
		assertThat(parsed.database()).isEqualTo(redis.database());
	}

	@Test
	void urlWithPasswordAndDatabaseIsParsed() {
		TestRedis redis = TestRedis.fromUrl("redis://:s3cret@redis.example:6390/2");
		assertThat(redis.host()).isEqualTo("redis.example");
		assertThat(redis.port()).isEqualTo(6390);
		assertThat(redis.username()).isNull();
		assertThat(redis.password()).isEqualTo("s3cret");
		assertThat(redis.database()).isEqualTo(2);
		assertThat(redis.url()).isEqualTo("redis://:s3cret@redis.example:6390/2");
		assertThat(redis.springProperties()).containsExactly("spring.data.redis.host=redis.example",
				"spring.data.redis.port=6390", "spring.data.redis.password=s3cret", "spring.data.redis.database=2");
	}

	@Test
	void urlWithUserKeepsTheUser() {
		TestRedis redis = TestRedis.fromUrl("redis://app:pw@redis.example:6390");
		assertThat(redis.username()).isEqualTo("app");
		assertThat(redis.password()).isEqualTo("pw");
		assertThat(redis.url()).isEqualTo("redis://app:pw@redis.example:6390");
		assertThat(redis.springProperties()).contains("spring.data.redis.username=app",
				"spring.data.redis.password=pw");
	}

	@Test
	void urlWithoutPortUsesTheDefaultPort() {
		TestRedis redis = TestRedis.fromUrl("redis://redis.example");
		assertThat(redis.port()).isEqualTo(6379);
		assertThat(redis.password()).isNull();
		assertThat(redis.database()).isZero();
		assertThat(redis.springProperties()).containsExactly("spring.data.redis.host=redis.example",
				"spring.data.redis.port=6379");
	}

	@Test
	void urlWithAnotherSchemeIsRejected() {
		assertThatIllegalStateException().isThrownBy(() -> TestRedis.fromUrl("http://redis.example:6379"))
			.withMessageContaining(TestRedis.URL_ENVIRONMENT_VARIABLE);
	}

	@Test
	void privateServerCanBeStoppedAndStartedAgainOnTheSamePort() throws IOException {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			int port = server.port();
			command(server, "SET", "key", "value");
			server.stop();
			assertThat(server.isRunning()).isFalse();
			assertThatIOException().isThrownBy(() -> command(server, "PING"));
			server.start();
			assertThat(server.isRunning()).isTrue();
			assertThat(server.port()).isEqualTo(port);
			assertThat(command(server, "PING")).isEqualTo("PONG");
			assertThat(command(server, "EXISTS", "key")).as("nothing persisted across the restart").isEqualTo("0");
		}
	}

	@Test
	void privateServerCannotBeStartedTwice() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			assertThatIllegalStateException().isThrownBy(server::start).withMessageContaining("already running");
		}
	}

	@Test
	void privateServerIsSeparateFromTheSharedServer() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			assertThat(server.port()).isNotEqualTo(TestRedis.shared().port());
			assertThat(server.springProperties()).containsExactly("spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + server.port());
		}
	}

	@Test
	void closedPrivateServerNoLongerAnswers() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		RedisServerProcess server = TestRedis.startPrivateServer();
		server.close();
		assertThat(server.isRunning()).isFalse();
		assertThatIOException().isThrownBy(() -> command(server, "PING"));
		server.close();
	}

	@Test
	void privateServerRunsTheBinaryChosenBySystemProperty() throws Exception {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			assertThat(server.binary()).isEqualTo(TestRedis.localBinary().orElseThrow());
			assertThat(server.version()).isEqualTo(versionPrintedBy(server.binary()));
		}
	}

	@Test
	void shippedBinaryRunsRedis62() {
		Optional<Path> shipped = TestRedis.shippedBinary();
		assumeTrue(shipped.isPresent(), "the embedded-redis jar has no binary for this platform");
		try (RedisServerProcess server = RedisServerProcess.launch(shipped.get(), List.of())) {
			assertThat(server.version()).startsWith("6.2.");
		}
	}

	@Test
	void explicitBinaryIsUsedAsGiven() {
		Optional<Path> shipped = TestRedis.shippedBinary();
		assumeTrue(shipped.isPresent(), "the embedded-redis jar has no binary for this platform");
		assertThat(TestRedis.locateBinary(shipped.get().toString())).contains(shipped.get());
	}

	@Test
	void explicitBinaryMustBeAnAbsolutePathToAnExecutable() {
		assertThatIllegalStateException().isThrownBy(() -> TestRedis.locateBinary("/no/such/redis-server"))
			.withMessageContaining(TestRedis.BINARY_PROPERTY);
		assertThatIllegalStateException().isThrownBy(() -> TestRedis.locateBinary("bin/redis-server"))
			.withMessageContaining(TestRedis.BINARY_PROPERTY);
	}

	@Test
	void shippedBinaryIsChosenByOperatingSystemAndArchitecture() {
		assertThat(TestRedis.shippedResourceName("Linux", "amd64")).isEqualTo("redis-server-6.2.6-v5-linux-amd64");
		assertThat(TestRedis.shippedResourceName("Linux", "aarch64")).isEqualTo("redis-server-6.2.7-linux-arm64");
		assertThat(TestRedis.shippedResourceName("Mac OS X", "x86_64")).isEqualTo("redis-server-6.2.6-v5-darwin-amd64");
		assertThat(TestRedis.shippedResourceName("Mac OS X", "aarch64"))
			.isEqualTo("redis-server-6.2.6-v5-darwin-arm64");
		assertThat(TestRedis.shippedResourceName("Windows 11", "amd64")).isNull();
	}

	private static String command(RedisServerProcess server, String... args) throws IOException {
		return TestRedis.command(server.host(), server.port(), null, null, args);
	}

	private static String infoField(String info, String name) {
		return info.lines()
			.filter((line) -> line.startsWith(name + ":"))
			.map((line) -> line.substring(name.length() + 1))
			.findFirst()
			.orElseThrow();
	}

	private static String versionPrintedBy(Path binary) throws Exception {
		Process process = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
		Matcher version = Pattern.compile("v=(\\S+)").matcher(output);
		assertThat(version.find()).as("version in %s", output).isTrue();
		return version.group(1);
	}

}
