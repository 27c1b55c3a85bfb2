package io.github.delayqueue.test.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The Redis server that tests run against, resolved once per JVM on first use of
 * {@link #shared()}:
 * <ol>
 * <li>the URL in the environment variable {@value #URL_ENVIRONMENT_VARIABLE} (for example
 * {@code redis://:secret@127.0.0.1:6390/2}) when it is set;</li>
 * <li>else a Testcontainers {@value #DOCKER_IMAGE} container when Docker is
 * available;</li>
 * <li>else a {@code redis-server} process on a free loopback port, run from the binary
 * chosen by the system property {@value #BINARY_PROPERTY}: {@code auto} (the default:
 * {@code redis-server} on the {@code PATH}, else the Redis 6.2 binary shipped in the
 * embedded-redis jar), {@code shipped} (always the shipped binary) or an absolute
 * path.</li>
 * </ol>
 */
public final class TestRedis {

	/**
	 * Environment variable holding the {@code redis://} URL of an existing Redis to use.
	 */
	public static final String URL_ENVIRONMENT_VARIABLE = "DELAY_QUEUE_TEST_REDIS_URL";

	/**
	 * System property choosing the {@code redis-server} binary: {@code auto},
	 * {@code shipped} or an absolute path.
	 */
	public static final String BINARY_PROPERTY = "delay-queue.test.redis-binary";

	/** Docker image used when Testcontainers can run. */
	public static final String DOCKER_IMAGE = "redis:7";

	private static final int REDIS_PORT = 6379;

	private static final int SOCKET_TIMEOUT_MILLIS = 2000;

	/** Binaries in the embedded-redis jar, by operating system and architecture. */
	private static final Map<String, String> SHIPPED_BINARIES = Map.of("linux-amd64",
			"redis-server-6.2.6-v5-linux-amd64", "linux-arm64", "redis-server-6.2.7-linux-arm64", "darwin-amd64",
			"redis-server-6.2.6-v5-darwin-amd64", "darwin-arm64", "redis-server-6.2.6-v5-darwin-arm64");

	private static @Nullable TestRedis shared;

	private static @Nullable Path extractedShippedBinary;

	private final String source;

	private final String host;

	private final int port;

	private final @Nullable String username;

	private final @Nullable String password;

	private final int database;

	private TestRedis(String source, String host, int port, @Nullable String username, @Nullable String password,
			int database) {
		this.source = source;
		this.host = host;
		this.port = port;
		this.username = username;
		this.password = password;
		this.database = database;
	}

	/**
	 * Returns the Redis shared by all tests of this JVM, resolving and if needed starting
	 * it on first call.
	 * @return the shared Redis
	 */
	public static synchronized TestRedis shared() {
		if (shared == null) {
			TestRedis redis = resolve();
			System.out.println("Test Redis: " + redis.source + ", version " + redis.version() + ", at " + redis.host
					+ ":" + redis.port);
			shared = redis;
		}
		return shared;
	}

	private static TestRedis resolve() {
		String url = System.getenv(URL_ENVIRONMENT_VARIABLE);
		if (url != null && !url.isBlank()) {
			return fromUrl(url);
		}
		if (isDockerAvailable()) {
			GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(DOCKER_IMAGE))
				.withExposedPorts(REDIS_PORT);
			container.start();
			return new TestRedis("Testcontainers " + DOCKER_IMAGE, container.getHost(),
					container.getMappedPort(REDIS_PORT), null, null, 0);
		}
		Path binary = localBinary().orElseThrow(() -> new IllegalStateException("No Redis for tests: set "
				+ URL_ENVIRONMENT_VARIABLE + ", start Docker, or put redis-server on the PATH"));
		RedisServerProcess server = RedisServerProcess.launch(binary, List.of());
		return new TestRedis("redis-server process " + binary, server.host(), server.port(), null, null, 0);
	}

	private static boolean isDockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

	/**
	 * Describes the Redis at a
	 * {@code redis://[[username]:password@]host[:port][/database]} URL.
	 * @param url the URL
	 * @return the Redis at that URL
	 */
	static TestRedis fromUrl(String url) {
		URI uri = URI.create(url.strip());
		if (!"redis".equals(uri.getScheme()) || uri.getHost() == null) {
			throw new IllegalStateException(URL_ENVIRONMENT_VARIABLE + " must look like redis://[[user]:password@]host"
					+ "[:port][/database], but is " + url);
		}
		String username = null;
		String password = null;
		String userInfo = uri.getUserInfo();
		if (userInfo != null) {
			int colon = userInfo.indexOf(':');
			username = (colon > 0) ? userInfo.substring(0, colon) : null;
			password = userInfo.substring(colon + 1);
		}
		String path = uri.getPath();
		int database = (path == null || path.isEmpty() || path.equals("/")) ? 0 : Integer.parseInt(path.substring(1));
		int port = (uri.getPort() != -1) ? uri.getPort() : REDIS_PORT;
		return new TestRedis(URL_ENVIRONMENT_VARIABLE, uri.getHost(), port, username, password, database);
	}

	/**
	 * Starts a new {@code redis-server} process on a free loopback port, separate from
	 * the shared Redis, using the binary chosen by {@value #BINARY_PROPERTY}. The caller
	 * closes it.
	 * @param extraArguments server options that override the defaults, e.g.
	 * {@code --appendonly yes}
	 * @return the running server
	 * @throws IllegalStateException if no binary is available or the server does not
	 * start
	 */
	public static RedisServerProcess startPrivateServer(String... extraArguments) {
		Path binary = localBinary()
			.orElseThrow(() -> new IllegalStateException("No redis-server binary for " + platform() + " to start"));
		RedisServerProcess server = RedisServerProcess.launch(binary, List.of(extraArguments));
		System.out.println("Private test Redis: redis-server process " + binary + ", version " + server.version()
				+ ", at " + server.host() + ":" + server.port());
		return server;
	}

	/**
	 * Starts a new Sentinel on a free loopback port, using the binary chosen by
	 * {@value #BINARY_PROPERTY} in Sentinel mode. The caller closes it.
	 * @param config the Sentinel's configuration, e.g. its {@code sentinel monitor} line
	 * @return the running Sentinel
	 * @throws IllegalStateException if no binary is available or it does not start
	 */
	public static RedisServerProcess startPrivateSentinel(String config) {
		Path binary = localBinary()
			.orElseThrow(() -> new IllegalStateException("No redis-server binary for " + platform() + " to start"));
		return RedisServerProcess.launchSentinel(binary, config);
	}

	/**
	 * Tells whether {@link #startPrivateServer(String...)} can work here, that is whether
	 * a {@code redis-server} binary is available.
	 * @return {@code true} if a private server can be started
	 */
	public static boolean canStartPrivateServer() {
		return localBinary().isPresent();
	}

	/**
	 * Returns the {@code redis-server} binary chosen by {@value #BINARY_PROPERTY}.
	 * @return the binary, or empty if none is available for this platform
	 * @throws IllegalStateException if the property names a file that is not executable
	 */
	static Optional<Path> localBinary() {
		return locateBinary(System.getProperty(BINARY_PROPERTY, "auto"));
	}

	static Optional<Path> locateBinary(String choice) {
		switch (choice.strip().toLowerCase(Locale.ROOT)) {
			case "auto":
				return onPath("redis-server").or(TestRedis::shippedBinary);
			case "shipped":
				return shippedBinary();
			default:
				Path binary = Path.of(choice.strip());
				if (!binary.isAbsolute() || !Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
					throw new IllegalStateException(BINARY_PROPERTY + " must be auto, shipped or the absolute path of "
							+ "an executable redis-server, but is " + choice);
				}
				return Optional.of(binary);
		}
	}

	private static Optional<Path> onPath(String command) {
		String path = System.getenv("PATH");
		if (path == null) {
			return Optional.empty();
		}
		for (String directory : path.split(File.pathSeparator)) {
			if (!directory.isEmpty()) {
				Path candidate = Path.of(directory, command);
				if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
					return Optional.of(candidate);
				}
			}
		}
		return Optional.empty();
	}

	/**
	 * Returns the Redis 6.2 binary shipped in the embedded-redis jar for this platform,
	 * extracted once per JVM to an executable temporary file.
	 * @return the extracted binary, or empty if the jar has none for this platform
	 */
	static synchronized Optional<Path> shippedBinary() {
		if (extractedShippedBinary == null) {
			String resource = shippedResourceName(System.getProperty("os.name"), System.getProperty("os.arch"));
			if (resource == null) {
				return Optional.empty();
			}
			try (InputStream in = TestRedis.class.getResourceAsStream("/" + resource)) {
				if (in == null) {
					return Optional.empty();
				}
				Path binary = Files.createTempFile(resource + "-", "");
				binary.toFile().deleteOnExit();
				Files.copy(in, binary, StandardCopyOption.REPLACE_EXISTING);
				if (!binary.toFile().setExecutable(true, true)) {
					throw new IOException("Cannot make " + binary + " executable");
				}
				extractedShippedBinary = binary;
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot extract " + resource + " from the embedded-redis jar", ex);
			}
		}
		return Optional.of(extractedShippedBinary);
	}

	/**
	 * Names the embedded-redis resource holding {@code redis-server} for a platform.
	 * @param osName the {@code os.name} system property
	 * @param osArch the {@code os.arch} system property
	 * @return the resource name, or {@code null} if the jar has no binary for that
	 * platform
	 */
	static @Nullable String shippedResourceName(String osName, String osArch) {
		return SHIPPED_BINARIES.get(platform(osName, osArch));
	}

	private static String platform() {
		return platform(System.getProperty("os.name"), System.getProperty("os.arch"));
	}

	private static String platform(String osName, String osArch) {
		String os = osName.toLowerCase(Locale.ROOT);
		String arch = osArch.toLowerCase(Locale.ROOT);
		String osPart = os.contains("linux") ? "linux" : (os.contains("mac") || os.contains("darwin")) ? "darwin" : os;
		String archPart = switch (arch) {
			case "amd64", "x86_64" -> "amd64";
			case "aarch64", "arm64" -> "arm64";
			default -> arch;
		};
		return osPart + "-" + archPart;
	}

	/**
	 * Returns the host name or address of the shared Redis.
	 * @return the host
	 */
	public String host() {
		return this.host;
	}

	/**
	 * Returns the port of the shared Redis.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns the user name to authenticate with, if any.
	 * @return the user name, or {@code null} for the default user
	 */
	public @Nullable String username() {
		return this.username;
	}

	/**
	 * Returns the password to authenticate with, if any.
	 * @return the password, or {@code null} if Redis needs none
	 */
	public @Nullable String password() {
		return this.password;
	}

	/**
	 * Returns the database index tests should use.
	 * @return the database index, {@code 0} unless the URL names another
	 */
	public int database() {
		return this.database;
	}

	/**
	 * Returns a {@code redis://} URL of the shared Redis, with credentials and database
	 * when set.
	 * @return the URL
	 */
	public String url() {
		StringBuilder url = new StringBuilder("redis://");
		if (this.password != null) {
			url.append((this.username != null) ? this.username : "").append(':').append(this.password).append('@');
		}
		url.append(this.host).append(':').append(this.port);
		if (this.database != 0) {
			url.append('/').append(this.database);
		}
		return url.toString();
	}

	/**
	 * Returns Spring Boot properties pointing at the shared Redis, for
	 * {@code ApplicationContextRunner.withPropertyValues(...)} or
	 * {@code @SpringBootTest(properties = ...)}.
	 * @return {@code spring.data.redis.*} properties as {@code name=value} strings
	 */
	public String[] springProperties() {
		List<String> properties = new ArrayList<>();
		properties.add("spring.data.redis.host=" + this.host);
		properties.add("spring.data.redis.port=" + this.port);
		if (this.username != null) {
			properties.add("spring.data.redis.username=" + this.username);
		}
		if (this.password != null) {
			properties.add("spring.data.redis.password=" + this.password);
		}
		if (this.database != 0) {
			properties.add("spring.data.redis.database=" + this.database);
		}
		return properties.toArray(String[]::new);
	}

	/**
	 * Returns the version of the shared Redis.
	 * @return the {@code redis_version} reported by {@code INFO server}, for example
	 * {@code 7.0.15}
	 */
	public String version() {
		return version(this.host, this.port, this.username, this.password);
	}

	/**
	 * Sends one command to the shared Redis, authenticating first when it has a password.
	 * @param args the command and its arguments
	 * @return the reply as text
	 * @throws IOException if Redis cannot be reached or replies with an error
	 */
	String command(String... args) throws IOException {
		return command(this.host, this.port, this.username, this.password, args);
	}

	static String version(String host, int port, @Nullable String username, @Nullable String password) {
		try {
			String info = command(host, port, username, password, "INFO", "server");
			return info.lines()
				.filter((line) -> line.startsWith("redis_version:"))
				.map((line) -> line.substring("redis_version:".length()).strip())
				.findFirst()
				.orElseThrow(
						() -> new IllegalStateException("No redis_version in INFO server of " + host + ":" + port));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("INFO server failed on " + host + ":" + port, ex);
		}
	}

	/**
	 * Sends one command over a fresh connection, speaking just enough RESP for PING, INFO
	 * and the like.
	 * @param host the Redis host
	 * @param port the Redis port
	 * @param username the user to authenticate as, or {@code null} for the default user
	 * @param password the password, or {@code null} to skip {@code AUTH}
	 * @param args the command and its arguments
	 * @return the reply as text: a status, an integer or a bulk string ({@code ""} for
	 * nil), or the elements of an array, one per line
	 * @throws IOException if Redis cannot be reached or replies with an error
	 */
	static String command(String host, int port, @Nullable String username, @Nullable String password, String... args)
			throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), SOCKET_TIMEOUT_MILLIS);
			socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
			OutputStream out = socket.getOutputStream();
			InputStream in = new BufferedInputStream(socket.getInputStream());
			if (password != null) {
				write(out, (username != null) ? List.of("AUTH", username, password) : List.of("AUTH", password));
				read(in);
			}
			write(out, List.of(args));
			return read(in);
		}
	}

	private static void write(OutputStream out, List<String> args) throws IOException {
		ByteArrayOutputStream request = new ByteArrayOutputStream();
		request.writeBytes(("*" + args.size() + "\r\n").getBytes(StandardCharsets.UTF_8));
		for (String arg : args) {
			byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
			request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
			request.writeBytes(bytes);
			request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
		}
		out.write(request.toByteArray());
		out.flush();
	}

	private static String read(InputStream in) throws IOException {
		int type = in.read();
		String line = readLine(in);
		switch (type) {
			case '+', ':':
				return line;
			case '-':
				throw new IOException("Redis replied with an error: " + line);
			case '$':
				int length = Integer.parseInt(line);
				if (length < 0) {
					return "";
				}
				byte[] bulk = in.readNBytes(length);
				readLine(in);
				return new String(bulk, StandardCharsets.UTF_8);
			case '*':
				List<String> elements = new ArrayList<>();
				for (int i = 0; i < Integer.parseInt(line); i++) {
					elements.add(read(in));
				}
				return String.join("\n", elements);
			default:
				throw new IOException("Unexpected Redis reply: " + (char) type + line);
		}
	}

	private static String readLine(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		for (int b = in.read(); b != '\n'; b = in.read()) {
			if (b == -1) {
				throw new IOException("Connection closed by Redis");
			}
			if (b != '\r') {
				line.write(b);
			}
		}
		return line.toString(StandardCharsets.UTF_8);
	}

}
