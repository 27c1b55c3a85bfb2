package io.github.delayqueue.sample;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import redis.embedded.core.ExecutableProvider;

/**
 * A throwaway {@code redis-server} process on a free loopback port, without persistence.
 * Uses the {@code redis-server} on the {@code PATH} if there is one, else the binary
 * shipped in the embedded-redis jar.
 * <p>
 * Where {@code /bin/sh} exists (Linux, macOS) the server runs under a small shell
 * watchdog that stops it when the watchdog's standard input closes: when {@link #stop()}
 * closes it, and when this JVM dies in any way, even by {@code kill -9}, as the kernel
 * then closes the JVM's end of the pipe. Elsewhere the server is started directly and
 * outlives a JVM killed without shutdown hooks.
 */
final class EmbeddedRedisServer {

	/** The address the server listens on. */
	static final String HOST = "127.0.0.1";

	private static final Log logger = LogFactory.getLog(EmbeddedRedisServer.class);

	private static final Pattern VERSION = Pattern.compile("Redis version=([^,\\s]+)");

	private static final String READY = "Ready to accept connections";

	private static final long STARTUP_TIMEOUT_SECONDS = 10;

	private static final long SHUTDOWN_TIMEOUT_SECONDS = 5;

	private static final Path SHELL = Path.of("/bin/sh");

	/**
	 * Runs the server in the background ({@code "$@"}), lets go of the output pipe so
	 * that the JVM sees it close when the server exits, ignores SIGTERM (only the end of
	 * its input stops it), then waits for that end of input and stops the server.
	 */
	private static final String WATCHDOG = "\"$@\" & redis=$!; exec >/dev/null 2>&1; trap '' TERM; "
			+ "read line; kill $redis; wait $redis";

	private final Process process;

	private final Path executable;

	private final int port;

	private final String version;

	private EmbeddedRedisServer(Process process, Path executable, int port, String version) {
		this.process = process;
		this.executable = executable;
		this.port = port;
		this.version = version;
	}

	/**
	 * Starts a server and waits until it accepts connections.
	 * @return the running server
	 * @throws IOException if no binary can be found or the server does not come up
	 */
	static EmbeddedRedisServer start() throws IOException {
		Path executable = findExecutable();
		int port = freePort();
		List<String> command = new ArrayList<>(List.of(executable.toString(), "--bind", HOST, "--port",
				String.valueOf(port), "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", ""));
		if (Files.isExecutable(SHELL)) {
			command.addAll(0, List.of(SHELL.toString(), "-c", WATCHDOG, "embedded-redis-watchdog"));
		}
		Process process = new ProcessBuilder(command).directory(new File(System.getProperty("java.io.tmpdir")))
			.redirectErrorStream(true)
			.start();
		CompletableFuture<String> ready = new CompletableFuture<>();
		Thread output = new Thread(() -> readOutput(process, ready), "embedded-redis-" + port);
		output.setDaemon(true);
		output.start();
		try {
			return new EmbeddedRedisServer(process, executable, port,
					ready.get(STARTUP_TIMEOUT_SECONDS, TimeUnit.SECONDS));
		}
		catch (ExecutionException | TimeoutException | InterruptedException ex) {
			kill(process);
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			Throwable cause = (ex instanceof ExecutionException) ? ex.getCause() : ex;
			throw new IOException("Could not start " + executable + " on " + HOST + ":" + port, cause);
		}
	}

	/**
	 * @return the port the server listens on
	 */
	int port() {
		return this.port;
	}

	/**
	 * @return what was started, for example {@code 7.0.15 (/usr/bin/redis-server)}
	 */
	String description() {
		return this.version + " (" + this.executable + ")";
	}

	/**
	 * Stops the server, politely first (closing the watchdog's input, or SIGTERM when
	 * there is no watchdog); does nothing if it is no longer running.
	 */
	void stop() {
		if (!this.process.isAlive()) {
			return;
		}
		try {
			this.process.getOutputStream().close();
		}
		catch (IOException ex) {
			logger.debug("Could not close the input of the embedded Redis process", ex);
		}
		this.process.destroy();
		try {
			if (!this.process.waitFor(SHUTDOWN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				kill(this.process);
			}
		}
		catch (InterruptedException ex) {
			kill(this.process);
			Thread.currentThread().interrupt();
		}
		logger.info("Stopped embedded Redis on " + HOST + ":" + this.port);
	}

	private static void kill(Process process) {
		process.descendants().forEach(ProcessHandle::destroyForcibly);
		process.destroyForcibly();
	}

	private static Path findExecutable() throws IOException {
		Optional<Path> onPath = Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
			.filter((directory) -> !directory.isEmpty())
			.map((directory) -> Path.of(directory, "redis-server"))
			.filter(Files::isExecutable)
			.findFirst();
		return onPath.isPresent() ? onPath.get() : ExecutableProvider.newJarResourceProvider().get().toPath();
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
			return socket.getLocalPort();
		}
	}

	/**
	 * Reads the server's output until it ends: completes {@code ready} with the version
	 * once the server accepts connections, or exceptionally with the startup output if it
	 * exits before. Everything is logged at debug level.
	 */
	private static void readOutput(Process process, CompletableFuture<String> ready) {
		List<String> startupOutput = new ArrayList<>();
		String version = "(unknown version)";
		try (BufferedReader reader = process.inputReader()) {
			for (String line = reader.readLine(); line != null; line = reader.readLine()) {
				logger.debug(line);
				if (!ready.isDone()) {
					startupOutput.add(line);
					Matcher matcher = VERSION.matcher(line);
					version = matcher.find() ? matcher.group(1) : version;
					if (line.contains(READY)) {
						ready.complete(version);
					}
				}
			}
		}
		catch (IOException ex) {
			ready.completeExceptionally(ex);
		}
		ready.completeExceptionally(
				new IOException("redis-server exited before it was ready:\n" + String.join("\n", startupOutput)));
	}

}
