package io.github.delayqueue.test.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * A TCP proxy on a free loopback port in front of a Redis server that can lose or hold
 * the reply to a command after Redis has run it. Regression tests use it to reproduce a
 * command that ran on Redis while the client never saw its reply: Lettuce re-sends the
 * commands it wrote but had no reply for when it reconnects (with {@code autoReconnect},
 * the default), and our own code may retry after a timeout.
 * <p>
 * Each client connection gets its own connection to Redis and three daemon threads that
 * forward bytes, one complete RESP message at a time: one passes the commands on, one
 * reads the replies, one passes them on. The proxy parses the commands the client sends
 * (RESP arrays of bulk strings, or inline commands) and the replies Redis sends (RESP2
 * and RESP3, including push messages and attributes), and pairs them in order, since
 * Redis answers the commands of one connection in order. Once a connection enters
 * subscribe mode ({@code SUBSCRIBE}, {@code PSUBSCRIBE}, {@code SSUBSCRIBE}) or sends
 * {@code MONITOR}, replies no longer pair with commands: such a connection is forwarded
 * as is and faults are never applied to it. RESP3 push messages are never paired with a
 * command either. Commands that get no reply ({@code CLIENT REPLY OFF} or {@code SKIP})
 * are not supported.
 * <p>
 * Faults are armed by a test and fire once, on the next reply to a command whose name
 * (its first element, upper-cased with {@link Locale#ROOT}) matches a predicate, or with
 * {@link #delayNextReplyToCommand(Predicate, Duration)} whose name and arguments do:
 * <ul>
 * <li>{@link #dropNextReplyTo(Predicate)}: Redis runs the command, the proxy swallows its
 * reply and closes that client connection, so the client sees a disconnect, reconnects
 * and replays;</li>
 * <li>{@link #delayNextReplyTo(Predicate, Duration)}: Redis runs the command and the
 * proxy holds its reply (and the replies after it on that connection) for a while, so a
 * client with a shorter timeout fails although the command ran.</li>
 * </ul>
 * {@link #cutAll()} closes all client connections, {@link #pause()} and {@link #resume()}
 * stop and restart accepting and forwarding, {@link #latency(Duration)} puts Redis a
 * constant time away (every reply, push messages included, is passed on that long after
 * it came from Redis, each on its own time, so that pipelined replies are not held one
 * after another), and {@link #forwardedCount(Predicate)} counts the commands sent on to
 * Redis.
 * <p>
 * Lettuce 6 and later open connections with {@code HELLO 3} and use RESP3 when Redis
 * accepts it. The proxy understands RESP3, so by default it lets {@code HELLO} through;
 * {@link #forceResp2(boolean)} makes it rewrite {@code HELLO 3} into {@code HELLO 4},
 * which Redis rejects with a {@code NOPROTO} error, upon which Lettuce falls back to
 * RESP2 ({@code AUTH} or {@code PING}), as it does against a Redis older than 6.
 * <p>
 * What Lettuce does when the reply to a command is dropped (see
 * {@code FaultyRedisProxyTests}): with the default {@code ClientOptions}
 * ({@code autoReconnect} on, {@code DisconnectedBehavior.DEFAULT}) it reconnects and
 * sends the command again, so the command runs twice and the caller gets the second
 * reply. With {@code autoReconnect} off, or with
 * {@code DisconnectedBehavior.REJECT_COMMANDS}, it fails the command with a
 * {@code RedisException} ("Connection disconnected") and does not send it again, though
 * the command ran.
 * <p>
 * Usage: <pre class="code">
 * try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
 *     RedisClient client = RedisClient.create(RedisURI.create(proxy.host(), proxy.port()));
 *     FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
 *     // ... run the code under test, which sends EVALSHA ...
 *     assertThat(fault.awaitFired(Duration.ofSeconds(5))).isTrue();
 *     assertThat(proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"))).isEqualTo(2);
 * }
 * </pre>
 */
public final class FaultyRedisProxy implements AutoCloseable {

	private static final String HOST = "127.0.0.1";

	private static final Set<String> SUBSCRIBE_MODE_COMMANDS = Set.of("SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE",
			"MONITOR");

	private static final byte[] HELLO_4 = "*2\r\n$5\r\nHELLO\r\n$1\r\n4\r\n".getBytes(StandardCharsets.US_ASCII);

	private static final int CONNECT_TIMEOUT_MILLIS = 2000;

	private final String redisHost;

	private final int redisPort;

	private final ServerSocket serverSocket;

	private final Thread acceptor;

	private final Set<ProxiedConnection> connections = ConcurrentHashMap.newKeySet();

	private final List<Fault> faults = new CopyOnWriteArrayList<>();

	private final List<String> forwardedCommands = Collections.synchronizedList(new ArrayList<>());

	private final AtomicInteger acceptedConnections = new AtomicInteger();

	private final Object pauseMonitor = new Object();

	private final CountDownLatch closedLatch = new CountDownLatch(1);

	private boolean paused;

	private volatile boolean closed;

	private volatile boolean forceResp2;

	private volatile long latencyNanos;

	private FaultyRedisProxy(String redisHost, int redisPort) throws IOException {
		this.redisHost = redisHost;
		this.redisPort = redisPort;
		this.serverSocket = new ServerSocket();
		this.serverSocket.setReuseAddress(true);
		this.serverSocket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
		this.acceptor = new Thread(this::acceptConnections, "faulty-redis-proxy-" + port() + "-acceptor");
		this.acceptor.setDaemon(true);
	}

	/**
	 * Starts a proxy on a free loopback port in front of the given Redis.
	 * @param redisHost the host of the Redis to forward to
	 * @param redisPort the port of the Redis to forward to
	 * @return the running proxy
	 */
	public static FaultyRedisProxy start(String redisHost, int redisPort) {
		try {
			FaultyRedisProxy proxy = new FaultyRedisProxy(redisHost, redisPort);
			proxy.acceptor.start();
			return proxy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start a proxy for Redis at " + redisHost + ":" + redisPort, ex);
		}
	}

	/**
	 * Returns a predicate matching any of the given command names, ignoring case.
	 * @param names the command names, such as {@code EVAL} and {@code EVALSHA}
	 * @return the predicate
	 */
	public static Predicate<String> named(String... names) {
		Set<String> upperCased = ConcurrentHashMap.newKeySet();
		Arrays.stream(names).map((name) -> name.toUpperCase(Locale.ROOT)).forEach(upperCased::add);
		return upperCased::contains;
	}

	/**
	 * Returns the host the proxy listens on.
	 * @return the loopback address
	 */
	public String host() {
		return HOST;
	}

	/**
	 * Returns the port the proxy listens on.
	 * @return the port
	 */
	public int port() {
		return this.serverSocket.getLocalPort();
	}

	/**
	 * Arms a fault that lets Redis run the next command whose name matches, swallows its
	 * reply and then closes the client connection that sent it (and the replies to the
	 * commands it sent after it).
	 * @param commandMatches tests the upper-cased command name
	 * @return the armed fault
	 */
	public Fault dropNextReplyTo(Predicate<String> commandMatches) {
		return arm(new Fault(byName(commandMatches), null));
	}

	/**
	 * Arms a fault that lets Redis run the next command that matches as a whole (its name
	 * as sent, then its arguments), swallows its reply and then closes the client
	 * connection that sent it (and the replies to the commands it sent after it).
	 * @param commandMatches tests the command and its arguments
	 * @return the armed fault
	 * @see #withArgumentContaining(String, String)
	 */
	public Fault dropNextReplyToCommand(Predicate<List<String>> commandMatches) {
		return arm(new Fault(commandMatches, null));
	}

	/**
	 * Arms a fault that lets Redis run the next command whose name matches and holds its
	 * reply, and with it every later reply on that connection, for the given time before
	 * forwarding it.
	 * @param commandMatches tests the upper-cased command name
	 * @param delay how long to hold the reply
	 * @return the armed fault
	 */
	public Fault delayNextReplyTo(Predicate<String> commandMatches, Duration delay) {
		return arm(new Fault(byName(commandMatches), delay));
	}

	/**
	 * Arms a fault that lets Redis run the next command that matches as a whole (its name
	 * as sent, then its arguments) and holds its reply, and with it every later reply on
	 * that connection, for the given time before forwarding it.
	 * @param commandMatches tests the command and its arguments
	 * @param delay how long to hold the reply
	 * @return the armed fault
	 * @see #withArgumentContaining(String, String)
	 */
	public Fault delayNextReplyToCommand(Predicate<List<String>> commandMatches, Duration delay) {
		return arm(new Fault(commandMatches, delay));
	}

	/**
	 * Returns a predicate matching a command of the given name (ignoring case) with an
	 * argument that contains the given text, e.g. a script call naming a key.
	 * @param name the command name, such as {@code EVALSHA}
	 * @param text the text an argument contains
	 * @return the predicate
	 */
	public static Predicate<List<String>> withArgumentContaining(String name, String text) {
		return (command) -> command.get(0).equalsIgnoreCase(name)
				&& command.subList(1, command.size()).stream().anyMatch((argument) -> argument.contains(text));
	}

	private static Predicate<List<String>> byName(Predicate<String> nameMatches) {
		return (command) -> nameMatches.test(command.get(0).toUpperCase(Locale.ROOT));
	}

	private Fault arm(Fault fault) {
		this.faults.add(fault);
		return fault;
	}

	/**
	 * Closes every current client connection, and its connection to Redis. Commands
	 * already forwarded still run on Redis.
	 */
	public void cutAll() {
		for (ProxiedConnection connection : this.connections) {
			connection.close();
		}
	}

	/**
	 * Stops accepting connections and forwarding in both directions, as if the network to
	 * Redis were down: clients can still connect (the kernel completes the handshake) but
	 * what they send is held, as are the replies to commands already forwarded, until
	 * {@link #resume()}.
	 */
	public void pause() {
		synchronized (this.pauseMonitor) {
			this.paused = true;
		}
	}

	/**
	 * Restarts accepting connections and forwarding, passing on what was held during the
	 * pause.
	 */
	public void resume() {
		synchronized (this.pauseMonitor) {
			this.paused = false;
			this.pauseMonitor.notifyAll();
		}
	}

	/**
	 * Holds every reply from Redis for a constant time before passing it on, as if Redis
	 * were that far away: each reply is passed on at the time it came from Redis plus the
	 * latency, in order, so replies to pipelined commands come that much later, not one
	 * latency after another. Applies to replies that come from Redis from then on.
	 * @param latency how long to hold each reply; zero for none
	 * @throws IllegalArgumentException if the latency is negative
	 */
	public void latency(Duration latency) {
		if (latency.isNegative()) {
			throw new IllegalArgumentException("The latency must not be negative, but was " + latency);
		}
		this.latencyNanos = latency.toNanos();
	}

	/**
	 * Sets whether the proxy makes clients fall back to RESP2 by rewriting
	 * {@code HELLO 3} into {@code HELLO 4}, which Redis answers with a {@code NOPROTO}
	 * error. Applies to connections handshaking from then on.
	 * @param forceResp2 whether to force RESP2
	 */
	public void forceResp2(boolean forceResp2) {
		this.forceResp2 = forceResp2;
	}

	/**
	 * Returns how many commands whose name matches have been forwarded to Redis, counting
	 * replays.
	 * @param commandMatches tests the upper-cased command name
	 * @return the number of matching commands forwarded so far
	 */
	public int forwardedCount(Predicate<String> commandMatches) {
		synchronized (this.forwardedCommands) {
			return (int) this.forwardedCommands.stream().filter(commandMatches).count();
		}
	}

	/**
	 * Returns the names of all commands forwarded to Redis so far, in the order they were
	 * forwarded.
	 * @return a copy of the forwarded command names
	 */
	public List<String> forwardedCommands() {
		synchronized (this.forwardedCommands) {
			return List.copyOf(this.forwardedCommands);
		}
	}

	/**
	 * Returns how many client connections the proxy has accepted since it started.
	 * @return the number of accepted connections
	 */
	public int acceptedConnections() {
		return this.acceptedConnections.get();
	}

	/**
	 * Returns how many client connections are open now.
	 * @return the number of open connections
	 */
	public int openConnections() {
		return this.connections.size();
	}

	/**
	 * Stops the proxy: closes its listening socket and every connection, and ends its
	 * threads.
	 */
	@Override
	public void close() {
		this.closed = true;
		this.closedLatch.countDown();
		closeQuietly(this.serverSocket);
		resume();
		cutAll();
		try {
			this.acceptor.join(TimeUnit.SECONDS.toMillis(2));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void acceptConnections() {
		while (!this.closed) {
			try {
				awaitNotPaused();
				Socket client = this.serverSocket.accept();
				int number = this.acceptedConnections.incrementAndGet();
				Socket server = new Socket();
				try {
					server.connect(new InetSocketAddress(this.redisHost, this.redisPort), CONNECT_TIMEOUT_MILLIS);
				}
				catch (IOException ex) {
					closeQuietly(client);
					closeQuietly(server);
					continue;
				}
				new ProxiedConnection(number, client, server).start();
			}
			catch (IOException ex) {
				// Closed, or a failed accept: the loop ends when the proxy is closed
			}
		}
	}

	private void awaitNotPaused() {
		synchronized (this.pauseMonitor) {
			while (this.paused && !this.closed) {
				try {
					this.pauseMonitor.wait();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
		}
	}

	private boolean isPaused() {
		synchronized (this.pauseMonitor) {
			return this.paused;
		}
	}

	private @Nullable Fault claimFault(List<String> command) {
		for (Fault fault : this.faults) {
			if (fault.matches(command) && fault.claim()) {
				this.faults.remove(fault);
				return fault;
			}
		}
		return null;
	}

	private static void closeQuietly(@Nullable AutoCloseable closeable) {
		if (closeable != null) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				// Closing anyway
			}
		}
	}

	/**
	 * A fault armed on a proxy. It fires once, on the reply to the first matching command
	 * after it was armed.
	 */
	public static final class Fault {

		private final Predicate<List<String>> commandMatches;

		private final @Nullable Duration delay;

		private final AtomicBoolean claimed = new AtomicBoolean();

		private final CountDownLatch fired = new CountDownLatch(1);

		private volatile @Nullable String firedOn;

		private Fault(Predicate<List<String>> commandMatches, @Nullable Duration delay) {
			this.commandMatches = commandMatches;
			this.delay = delay;
		}

		/**
		 * Waits until the fault has fired: Redis has run the command and the proxy has
		 * swallowed its reply and closed the connection, or started holding the reply.
		 * @param timeout how long to wait at most
		 * @return whether the fault fired in time
		 */
		public boolean awaitFired(Duration timeout) {
			try {
				return this.fired.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		}

		/**
		 * Returns whether the fault has fired.
		 * @return whether it fired
		 */
		public boolean hasFired() {
			return this.fired.getCount() == 0;
		}

		/**
		 * Returns the name of the command the fault fired on.
		 * @return the command name, or {@code null} if the fault has not fired
		 */
		public @Nullable String firedOn() {
			return this.firedOn;
		}

		/**
		 * Disarms the fault if it has not been claimed by a command yet.
		 * @return whether the fault was disarmed before it fired
		 */
		public boolean cancel() {
			return this.claimed.compareAndSet(false, true);
		}

		private boolean matches(List<String> command) {
			return !this.claimed.get() && this.commandMatches.test(command);
		}

		private boolean claim() {
			return this.claimed.compareAndSet(false, true);
		}

		private void fire(String commandName) {
			this.firedOn = commandName;
			this.fired.countDown();
		}

	}

	/**
	 * A client connection, its connection to Redis, and the three threads forwarding
	 * between them: one passes the commands on, one reads the replies (and holds them for
	 * a fault), one passes each reply on at its time.
	 */
	private final class ProxiedConnection {

		/** Put after the replies to pass on: the connection closes once they are. */
		private static final Reply CLOSE = new Reply(new byte[0], 0);

		private final Socket client;

		private final Socket server;

		private final Queue<List<String>> awaitingReply = new ConcurrentLinkedQueue<>();

		private final BlockingQueue<Reply> replies = new LinkedBlockingQueue<>();

		private final Thread clientToServer;

		private final Thread serverToProxy;

		private final Thread proxyToClient;

		private volatile boolean unpaired;

		private final AtomicBoolean closed = new AtomicBoolean();

		ProxiedConnection(int number, Socket client, Socket server) {
			this.client = client;
			this.server = server;
			String prefix = "faulty-redis-proxy-" + port() + "-" + number;
			this.clientToServer = new Thread(this::forwardCommands, prefix + "-commands");
			this.clientToServer.setDaemon(true);
			this.serverToProxy = new Thread(this::readReplies, prefix + "-replies");
			this.serverToProxy.setDaemon(true);
			this.proxyToClient = new Thread(this::passRepliesOn, prefix + "-replies-out");
			this.proxyToClient.setDaemon(true);
		}

		void start() {
			FaultyRedisProxy.this.connections.add(this);
			if (FaultyRedisProxy.this.closed) {
				close();
				return;
			}
			this.clientToServer.start();
			this.serverToProxy.start();
			this.proxyToClient.start();
		}

		private void forwardCommands() {
			try {
				RespReader reader = new RespReader(this.client.getInputStream());
				OutputStream out = new BufferedOutputStream(this.server.getOutputStream());
				while (true) {
					List<String> command = reader.readCommand();
					if (command == null) {
						break;
					}
					byte[] bytes = reader.message();
					if (isPaused()) {
						out.flush();
						awaitNotPaused();
					}
					if (command.isEmpty()) {
						out.write(bytes);
						flushIfIdle(reader, out);
						continue;
					}
					String name = command.get(0).toUpperCase(Locale.ROOT);
					if (SUBSCRIBE_MODE_COMMANDS.contains(name)) {
						this.unpaired = true;
					}
					if (name.equals("HELLO") && command.size() > 1 && command.get(1).equals("3")
							&& FaultyRedisProxy.this.forceResp2) {
						bytes = HELLO_4;
					}
					if (!this.unpaired) {
						this.awaitingReply.add(command);
					}
					FaultyRedisProxy.this.forwardedCommands.add(name);
					out.write(bytes);
					flushIfIdle(reader, out);
				}
			}
			catch (IOException ex) {
				// Either side closed the connection
			}
			finally {
				close();
			}
		}

		/**
		 * Reads the replies from Redis, applies the faults, and queues each reply to be
		 * passed on at the time it came plus the latency.
		 */
		private void readReplies() {
			boolean closedByWriter = false;
			try {
				RespReader reader = new RespReader(this.server.getInputStream());
				while (true) {
					Character type = reader.readReply();
					if (type == null) {
						// Redis closed: the replies that came before still go out first.
						this.replies.add(CLOSE);
						closedByWriter = true;
						break;
					}
					byte[] bytes = reader.message();
					if (isPaused()) {
						awaitNotPaused();
					}
					if (type != '>' && !this.unpaired) {
						List<String> command = this.awaitingReply.poll();
						Fault fault = (command != null) ? claimFault(command) : null;
						String name = (command != null) ? command.get(0).toUpperCase(Locale.ROOT) : "";
						if (fault != null && fault.delay == null) {
							// Fired first, so that a client that saw the disconnect sees
							// the fault fired; the replies before this one still go out.
							fault.fire(name);
							this.replies.add(CLOSE);
							closedByWriter = true;
							return;
						}
						if (fault != null) {
							fault.fire(name);
							FaultyRedisProxy.this.closedLatch.await(fault.delay.toNanos(), TimeUnit.NANOSECONDS);
						}
					}
					this.replies.add(new Reply(bytes, System.nanoTime() + FaultyRedisProxy.this.latencyNanos));
				}
			}
			catch (IOException ex) {
				// Either side closed the connection
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				if (!closedByWriter) {
					close();
				}
			}
		}

		/** Passes each queued reply on to the client at its time, in order. */
		private void passRepliesOn() {
			try {
				OutputStream out = new BufferedOutputStream(this.client.getOutputStream());
				while (true) {
					Reply reply = this.replies.take();
					if (reply == CLOSE) {
						break;
					}
					long wait = reply.dueNanos() - System.nanoTime();
					if (wait > 0) {
						out.flush();
						TimeUnit.NANOSECONDS.sleep(wait);
					}
					if (isPaused()) {
						out.flush();
						awaitNotPaused();
					}
					out.write(reply.bytes());
					Reply next = this.replies.peek();
					if (next == null || next.dueNanos() - System.nanoTime() > 0) {
						out.flush();
					}
				}
			}
			catch (IOException ex) {
				// Either side closed the connection
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				close();
			}
		}

		private void flushIfIdle(RespReader reader, OutputStream out) throws IOException {
			if (reader.available() == 0) {
				out.flush();
			}
		}

		void close() {
			if (this.closed.compareAndSet(false, true)) {
				this.replies.clear();
				this.replies.add(CLOSE);
				closeQuietly(this.client);
				closeQuietly(this.server);
				FaultyRedisProxy.this.connections.remove(this);
			}
		}

	}

	/**
	 * A reply from Redis and the time to pass it on.
	 *
	 * @param bytes the reply as Redis sent it
	 * @param dueNanos the {@link System#nanoTime()} to pass it on at
	 */
	private record Reply(byte[] bytes, long dueNanos) {
	}

	/**
	 * Reads one complete RESP message at a time from a stream, keeping its raw bytes.
	 */
	private static final class RespReader {

		private final BufferedInputStream in;

		private final ByteArrayOutputStream message = new ByteArrayOutputStream();

		RespReader(InputStream in) {
			this.in = new BufferedInputStream(in);
		}

		int available() throws IOException {
			return this.in.available();
		}

		byte[] message() {
			return this.message.toByteArray();
		}

		/**
		 * Reads a command: a RESP array of bulk strings, or an inline command.
		 * @return the command and its arguments (empty for a blank inline line), or
		 * {@code null} at the end of the stream
		 */
		@Nullable List<String> readCommand() throws IOException {
			this.message.reset();
			int type = this.in.read();
			if (type == -1) {
				return null;
			}
			this.message.write(type);
			if (type != '*') {
				String line = (type == '\n') ? "" : (char) type + readLine();
				String trimmed = line.strip();
				return trimmed.isEmpty() ? List.of() : List.of(trimmed.split("\\s+"));
			}
			int count = Integer.parseInt(readLine());
			List<String> command = new ArrayList<>(Math.max(count, 0));
			for (int i = 0; i < count; i++) {
				int argumentType = readByte();
				if (argumentType != '$') {
					throw new IOException("Expected a bulk string in a command but got '" + (char) argumentType + "'");
				}
				int length = Integer.parseInt(readLine());
				command.add(new String(readBytes(length + 2), 0, length, StandardCharsets.UTF_8));
			}
			return command;
		}

		/**
		 * Reads a reply, RESP2 or RESP3.
		 * @return the type of the reply ({@code '>'} for a push message), or {@code null}
		 * at the end of the stream
		 */
		@Nullable Character readReply() throws IOException {
			this.message.reset();
			int type = this.in.read();
			if (type == -1) {
				return null;
			}
			this.message.write(type);
			readReplyBody(type);
			return (char) type;
		}

		private void readValue() throws IOException {
			readReplyBody(readByte());
		}

		private void readReplyBody(int type) throws IOException {
			String line = readLine();
			switch (type) {
				case '+', '-', ':', '_', ',', '#', '(' -> {
					// A single line
				}
				case '$', '!', '=' -> {
					int length = Integer.parseInt(line);
					if (length >= 0) {
						readBytes(length + 2);
					}
				}
				case '*', '~', '>' -> {
					int count = Integer.parseInt(line);
					for (int i = 0; i < count; i++) {
						readValue();
					}
				}
				case '%' -> {
					int count = Integer.parseInt(line);
					for (int i = 0; i < 2 * count; i++) {
						readValue();
					}
				}
				case '|' -> {
					int count = Integer.parseInt(line);
					for (int i = 0; i < 2 * count; i++) {
						readValue();
					}
					// An attribute precedes the value it describes
					readValue();
				}
				default -> throw new IOException("Unknown RESP type '" + (char) type + "'");
			}
		}

		private int readByte() throws IOException {
			int read = this.in.read();
			if (read == -1) {
				throw new EOFException();
			}
			this.message.write(read);
			return read;
		}

		private byte[] readBytes(int length) throws IOException {
			byte[] bytes = this.in.readNBytes(length);
			if (bytes.length < length) {
				throw new EOFException();
			}
			this.message.write(bytes);
			return bytes;
		}

		/**
		 * Reads up to and including the next line feed, returning the line without its CR
		 * LF.
		 */
		private String readLine() throws IOException {
			StringBuilder line = new StringBuilder();
			while (true) {
				int read = readByte();
				if (read == '\n') {
					int length = line.length();
					if (length > 0 && line.charAt(length - 1) == '\r') {
						line.setLength(length - 1);
					}
					return line.toString();
				}
				line.append((char) read);
			}
		}

	}

}
