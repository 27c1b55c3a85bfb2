package io.github.delayqueue.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} process on a loopback port, without persistence, that can be
 * killed and started again on the same port. It is stopped when closed and at the latest
 * when the JVM exits. Where {@code /bin/sh} exists (Linux, macOS) the server runs under a
 * small shell watchdog that also stops it when the JVM dies without running its shutdown
 * hooks, even by {@code kill -9}: the kernel then closes the watchdog's standard input.
 */
public final class RedisServerProcess implements AutoCloseable {

	private static final String HOST = "127.0.0.1";

	private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

	private static final long PING_INTERVAL_MILLIS = 20;

	/** How many free ports a launch tries before it gives up. */
	private static final int LAUNCH_ATTEMPTS = 5;

	private static final Pattern PROCESS_ID = Pattern.compile("process_id:(\\d+)");

	private static final Path SHELL = Path.of("/bin/sh");

	/**
	 * Keeps its standard input (the JVM's pipe) as fd 3, runs the server ({@code "$@"})
	 * in the background, stops it when that input ends, and exits with the server's exit
	 * code, so that a server that fails to start is seen at once.
	 */
	private static final String WATCHDOG = "exec 3<&0; \"$@\" </dev/null & redis=$!; "
			+ "{ read line <&3; kill $redis 2>/dev/null; } & wait $redis";

	private final Path binary;

	private final int port;

	private final Path directory;

	private final Path log;

	private final Thread shutdownHook = new Thread(this::close, "redis-server-shutdown");

	private @Nullable Process process;

	/** Whether the process runs under the watchdog, which then is its parent. */
	private boolean watched;

	private final List<String> extraArguments;

	/** The configuration file of a Sentinel, {@code null} for a Redis server. */
	private final @Nullable Path sentinelConfig;

	private RedisServerProcess(Path binary, int port, List<String> extraArguments, @Nullable String sentinelConfig)
			throws IOException {
		this.binary = binary;
		this.port = port;
		this.extraArguments = List.copyOf(extraArguments);
		this.directory = Files.createTempDirectory("delay-queue-redis-");
		this.log = this.directory.resolve("redis-server.log");
		if (sentinelConfig != null) {
			this.sentinelConfig = this.directory.resolve("sentinel.conf");
			Files.writeString(this.sentinelConfig, sentinelConfig, StandardCharsets.UTF_8);
		}
		else {
			this.sentinelConfig = null;
		}
		Runtime.getRuntime().addShutdownHook(this.shutdownHook);
	}

	/**
	 * Starts a new server from the given binary on a free loopback port and waits until
	 * it answers PING.
	 * @param binary the {@code redis-server} executable
	 * @param extraArguments server options that override the defaults, e.g.
	 * {@code --appendonly yes}
	 * @return the running server
	 * @throws IllegalStateException if the server does not answer in time
	 */
	static RedisServerProcess launch(Path binary, List<String> extraArguments) {
		return launch(binary, extraArguments, null);
	}

	/**
	 * Starts a new Sentinel from the given binary on a free loopback port and waits until
	 * it answers PING. It keeps its configuration file (which Sentinel rewrites) across
	 * {@link #stop()} and {@link #start()}.
	 * @param binary the {@code redis-server} executable
	 * @param config the Sentinel's configuration, e.g. its {@code sentinel monitor} line
	 * @return the running Sentinel
	 * @throws IllegalStateException if it does not answer in time
	 */
	static RedisServerProcess launchSentinel(Path binary, String config) {
		return launch(binary, List.of(), config);
	}

	private static RedisServerProcess launch(Path binary, List<String> extraArguments,
			@Nullable String sentinelConfig) {
		// Another JVM (a parallel test fork) may take the free port before the server
		// binds it: then the server exits, and the next attempt takes another port.
		for (int attempt = 1;; attempt++) {
			RedisServerProcess server;
			try {
				server = new RedisServerProcess(binary, freePort(), extraArguments, sentinelConfig);
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot prepare a redis-server process", ex);
			}
			try {
				server.start();
				return server;
			}
			catch (RuntimeException ex) {
				server.close();
				if (attempt == LAUNCH_ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
			return socket.getLocalPort();
		}
	}

	/**
	 * Returns the address the server listens on.
	 * @return {@code 127.0.0.1}
	 */
	public String host() {
		return HOST;
	}

	/**
	 * Returns the port the server listens on; it stays the same across {@link #stop()}
	 * and {@link #start()}.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns the {@code redis-server} executable this server runs.
	 * @return the binary
	 */
	public Path binary() {
		return this.binary;
	}

	/**
	 * Returns Spring Boot properties pointing at this server.
	 * @return {@code spring.data.redis.host} and {@code spring.data.redis.port} as
	 * {@code name=value} strings
	 */
	public String[] springProperties() {
		return new String[] { "spring.data.redis.host=" + HOST, "spring.data.redis.port=" + this.port };
	}

	/**
	 * Sends one command to the server.
	 * @param args the command and its arguments
	 * @return the reply as text (an array's elements one per line)
	 * @throws UncheckedIOException if the server cannot be reached or replies with an
	 * error
	 */
	public String command(String... args) {
		try {
			return TestRedis.command(HOST, this.port, null, null, args);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(String.join(" ", List.of(args).subList(0, Math.min(2, args.length)))
					+ " failed on " + HOST + ":" + this.port, ex);
		}
	}

	/**
	 * Waits until this server replicates from the given primary and is in sync with it.
	 * @param primary the primary
	 * @param timeout the longest wait
	 * @throws IllegalStateException if that does not happen in time
	 */
	public void awaitReplicaOf(RedisServerProcess primary, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			String replication = command("INFO", "replication");
			if (replication.contains("role:slave") && replication.contains("master_port:" + primary.port())
					&& replication.contains("master_link_status:up")) {
				return;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException(
						"Port " + this.port + " did not replicate from port " + primary.port() + " within " + timeout);
			}
			try {
				Thread.sleep(PING_INTERVAL_MILLIS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for replication", ex);
			}
		}
	}

	/**
	 * Returns the version of the running server.
	 * @return the {@code redis_version} reported by {@code INFO server}
	 */
	public String version() {
		return TestRedis.version(HOST, this.port, null, null);
	}

	/**
	 * Tells whether the server process is alive.
	 * @return {@code true} between {@link #start()} and {@link #stop()}
	 */
	public synchronized boolean isRunning() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * Starts the server again on the same port, empty (a cluster node or Sentinel keeps
	 * its configuration file), and waits until it answers PING.
	 * @throws IllegalStateException if it is already running or does not answer in time
	 */
	public synchronized void start() {
		if (isRunning()) {
			throw new IllegalStateException("redis-server on port " + this.port + " is already running");
		}
		List<String> command = new ArrayList<>();
		if (this.sentinelConfig != null) {
			command.addAll(List.of(this.binary.toString(), this.sentinelConfig.toString(), "--sentinel", "--port",
					String.valueOf(this.port), "--bind", HOST, "--daemonize", "no"));
		}
		else {
			command.addAll(List.of(this.binary.toString(), "--port", String.valueOf(this.port), "--bind", HOST,
					"--save", "", "--appendonly", "no", "--dir", this.directory.toString(), "--daemonize", "no"));
		}
		command.addAll(this.extraArguments);
		this.watched = Files.isExecutable(SHELL);
		if (this.watched) {
			command.addAll(0, List.of(SHELL.toString(), "-c", WATCHDOG, "redis-server-watchdog"));
		}
		try {
			this.process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(this.log.toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run " + this.binary, ex);
		}
		awaitPing(this.process);
	}

	private void awaitPing(Process started) {
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		@Nullable IOException lastFailure = null;
		while (started.isAlive() && System.nanoTime() < deadline) {
			try {
				if ("PONG".equals(TestRedis.command(HOST, this.port, null, null, "PING"))) {
					if (isServedBy(started)) {
						return;
					}
					lastFailure = new IOException("the port is served by another process than the one started");
				}
			}
			catch (IOException ex) {
				lastFailure = ex;
			}
			try {
				Thread.sleep(PING_INTERVAL_MILLIS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
		String state = started.isAlive() ? "it did not answer PING within " + START_TIMEOUT.toSeconds() + " s"
				: "it exited with code " + started.exitValue();
		stop();
		String output = output();
		throw new IllegalStateException(
				this.binary + " did not start on " + HOST + ":" + this.port + ": " + state + " (last PING failure: "
						+ lastFailure + "). Its output:\n" + (output.isBlank() ? "(none)" : output.strip()));
	}

	/**
	 * Tells whether the server answering on the port is the process started (or, under
	 * the watchdog, its child), not a server of another JVM that took the port first.
	 */
	private boolean isServedBy(Process started) throws IOException {
		String info = TestRedis.command(HOST, this.port, null, null, "INFO", "server");
		Matcher matcher = PROCESS_ID.matcher(info);
		if (!matcher.find()) {
			return true;
		}
		long pid = Long.parseLong(matcher.group(1));
		return pid == started.pid() || started.descendants().anyMatch((child) -> child.pid() == pid);
	}

	private String output() {
		try {
			return Files.readString(this.log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			return "(unreadable: " + ex + ")";
		}
	}

	/**
	 * Kills the server like {@code kill -9} and waits until it has exited; does nothing
	 * if it is not running.
	 */
	public synchronized void stop() {
		if (this.process == null) {
			return;
		}
		// The server (and the watchdog's reader) first: the watchdog, waiting for the
		// server, reaps it at once and exits. Without a watchdog, this.process is the
		// server itself.
		if (this.watched) {
			this.process.descendants().forEach(ProcessHandle::destroyForcibly);
		}
		else {
			this.process.destroyForcibly();
		}
		try {
			if (!this.process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				this.process.destroyForcibly();
				if (!this.process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new IllegalStateException("redis-server on port " + this.port + " did not exit after kill");
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while stopping redis-server on port " + this.port, ex);
		}
		this.process = null;
	}

	/**
	 * Stops the server and deletes its working directory; closing again does nothing.
	 */
	@Override
	public synchronized void close() {
		stop();
		if (Files.exists(this.directory)) {
			try (Stream<Path> files = Files.walk(this.directory)) {
				for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
					Files.deleteIfExists(file);
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot delete " + this.directory, ex);
			}
		}
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// The JVM is shutting down: this is the shutdown hook running.
		}
	}

}
