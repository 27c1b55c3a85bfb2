package io.github.delayqueue.test.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A {@link RedisServerProcess} dies with the JVM that started it, even when that JVM is
 * killed with {@code kill -9} and runs no shutdown hook, and a server that cannot start
 * is reported at once with its output.
 */
class RedisServerProcessTests {

	private static final Pattern STARTED = Pattern.compile("redis port=(\\d+)");

	@Test
	void aServerThatCannotStartIsReportedAtOnceWithItsOutput() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		// "exited with code", not "did not answer PING": seen when it exited, not after
		// the
		// start timeout.
		assertThatIllegalStateException().isThrownBy(() -> TestRedis.startPrivateServer("--no-such-option", "yes"))
			.withMessageContaining("exited with code")
			.withMessageContaining("no-such-option");
	}

	@Test
	@DisabledOnOs(value = OS.WINDOWS,
			disabledReason = "No /bin/sh watchdog on Windows: there the Redis outlives a killed JVM")
	void redisStopsWhenTheJvmThatStartedItIsKilled() throws Exception {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), StartRedisAndWait.class.getName())
			.redirectErrorStream(true)
			.start();
		ProcessHandle redis = null;
		try {
			Matcher started = STARTED.matcher(firstLineMatching(jvm, STARTED).get(30, TimeUnit.SECONDS));
			assertThat(started.matches()).isTrue();
			int port = Integer.parseInt(started.group(1));
			ProcessHandle server = ProcessHandle.of(processId(port)).orElseThrow();
			redis = server;

			jvm.destroyForcibly();
			assertThat(jvm.waitFor(10, TimeUnit.SECONDS)).isTrue();

			await().atMost(Duration.ofSeconds(15)).until(() -> !server.isAlive() && !accepts(port));
		}
		finally {
			jvm.destroyForcibly();
			if (redis != null) {
				redis.destroyForcibly();
			}
		}
	}

	/**
	 * Reads the JVM's output, all of it so that the JVM never blocks on a full pipe, and
	 * completes with the first line matching the pattern.
	 */
	private static CompletableFuture<String> firstLineMatching(Process jvm, Pattern pattern) {
		CompletableFuture<String> line = new CompletableFuture<>();
		Thread reader = new Thread(() -> {
			StringBuilder seen = new StringBuilder();
			try (BufferedReader output = jvm.inputReader()) {
				for (String next = output.readLine(); next != null; next = output.readLine()) {
					seen.append(next).append('\n');
					if (pattern.matcher(next).matches()) {
						line.complete(next);
					}
				}
			}
			catch (IOException ex) {
				line.completeExceptionally(ex);
			}
			line.completeExceptionally(new IllegalStateException("The JVM exited without starting Redis:\n" + seen));
		}, "redis-jvm-output");
		reader.setDaemon(true);
		reader.start();
		return line;
	}

	/** Asks Redis for the pid of its process, as {@code INFO server} reports it. */
	private static long processId(int port) throws IOException {
		return TestRedis.command("127.0.0.1", port, null, null, "INFO", "server")
			.lines()
			.filter((line) -> line.startsWith("process_id:"))
			.map((line) -> Long.parseLong(line.substring("process_id:".length()).strip()))
			.findFirst()
			.orElseThrow(() -> new IOException("INFO server named no process_id"));
	}

	private static boolean accepts(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * The JVM under test: starts a Redis, prints its port and waits to be killed.
	 */
	static final class StartRedisAndWait {

		public static void main(String[] args) throws IOException, InterruptedException {
			RedisServerProcess redis = TestRedis.startPrivateServer();
			System.out.println("redis port=" + redis.port());
			new CountDownLatch(1).await();
		}

	}

}
