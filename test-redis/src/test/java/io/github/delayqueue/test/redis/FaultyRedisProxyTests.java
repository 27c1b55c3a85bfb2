package io.github.delayqueue.test.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.DefaultClientResources;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link FaultyRedisProxy}, with a plain Lettuce client and with Spring Data
 * Redis.
 */
class FaultyRedisProxyTests {

	private static final String INCR_SCRIPT = "return redis.call('INCR', KEYS[1])";

	private static final Duration WAIT = Duration.ofSeconds(5);

	private static ClientResources resources;

	private static RedisClient directClient;

	private static StatefulRedisConnection<String, String> direct;

	private final List<AutoCloseable> toClose = new ArrayList<>();

	private FaultyRedisProxy proxy;

	private String key;

	@BeforeAll
	static void startClientResources() {
		resources = DefaultClientResources.builder()
			.ioThreadPoolSize(2)
			.computationThreadPoolSize(2)
			.reconnectDelay(Delay.constant(Duration.ofMillis(10)))
			.build();
		directClient = RedisClient.create(resources, redisUri(TestRedis.shared().host(), TestRedis.shared().port()));
		direct = directClient.connect();
	}

	@AfterAll
	static void stopClientResources() {
		direct.close();
		directClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
		resources.shutdown(0, 2, TimeUnit.SECONDS);
	}

	@BeforeEach
	void startProxy() {
		this.proxy = FaultyRedisProxy.start(TestRedis.shared().host(), TestRedis.shared().port());
		this.key = "faulty-redis-proxy-tests:" + UUID.randomUUID();
	}

	@AfterEach
	void stopProxy() throws Exception {
		for (int i = this.toClose.size() - 1; i >= 0; i--) {
			this.toClose.get(i).close();
		}
		this.proxy.close();
		direct.sync().del(this.key);
	}

	@ParameterizedTest(name = "RESP2 forced: {0}")
	@ValueSource(booleans = { false, true })
	void lettuceTrafficPassesThrough(boolean resp2) throws Exception {
		this.proxy.forceResp2(resp2);
		StatefulRedisConnection<String, String> connection = connect(ClientOptions.create(), Duration.ofSeconds(5));
		RedisCommands<String, String> commands = connection.sync();
		String clientInfo = commands.clientInfo();
		if (clientInfo.contains(" resp=")) {
			// Redis 7 and later tell the protocol of the connection
			assertThat(clientInfo).contains(resp2 ? " resp=2" : " resp=3");
		}
		assertThat(commands.set(this.key, "value")).isEqualTo("OK");
		assertThat(commands.get(this.key)).isEqualTo("value");
		assertThat(commands.hgetall("faulty-redis-proxy-tests:missing")).isEmpty();
		assertThat(commands.get("faulty-redis-proxy-tests:missing")).isNull();
		RedisAsyncCommands<String, String> async = connection.async();
		connection.setAutoFlushCommands(false);
		List<RedisFuture<Long>> increments = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			increments.add(async.incr(this.key + ":counter"));
		}
		connection.flushCommands();
		connection.setAutoFlushCommands(true);
		assertThat(LettuceFutures.awaitAll(WAIT, increments.toArray(new RedisFuture<?>[0]))).isTrue();
		assertThat(increments.get(99).get()).isEqualTo(100L);
		assertThat(commands.del(this.key + ":counter")).isEqualTo(1L);
		Long incremented = commands.eval(INCR_SCRIPT, ScriptOutputType.INTEGER, this.key + ":counter");
		assertThat(incremented).isEqualTo(1L);
		assertThat(commands.del(this.key + ":counter")).isEqualTo(1L);
		assertThat(this.proxy.forwardedCount(FaultyRedisProxy.named("INCR"))).isEqualTo(100);
		assertThat(this.proxy.forwardedCount(FaultyRedisProxy.named("eval"))).isOne();
		assertThat(this.proxy.acceptedConnections()).isOne();
	}

	@Test
	void droppedReplyIsReplayedByLettuceAfterReconnecting() {
		RedisCommands<String, String> commands = connect(ClientOptions.create(), Duration.ofSeconds(5)).sync();
		FaultyRedisProxy.Fault fault = this.proxy.dropNextReplyTo(FaultyRedisProxy.named("EVAL", "EVALSHA"));
		Long incremented = commands.eval(INCR_SCRIPT, ScriptOutputType.INTEGER, this.key);
		assertThat(fault.hasFired()).isTrue();
		assertThat(fault.firedOn()).isEqualTo("EVAL");
		assertThat(incremented).isEqualTo(2L);
		assertThat(direct.sync().get(this.key)).isEqualTo("2");
		assertThat(this.proxy.forwardedCount(FaultyRedisProxy.named("EVAL"))).isEqualTo(2);
		assertThat(this.proxy.acceptedConnections()).isEqualTo(2);
	}

	@Test
	void droppedReplyFailsTheCommandWithoutReplayWhenCommandsAreRejectedWhileDisconnected() {
		ClientOptions options = ClientOptions.builder()
			.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
			.build();
		RedisCommands<String, String> commands = connect(options, Duration.ofSeconds(5)).sync();
		assertDroppedReplyFailsTheCommandOnceRun(commands);
		// The connection still reconnects for later commands
		await().atMost(WAIT)
			.ignoreException(RedisException.class)
			.untilAsserted(() -> assertThat(commands.get(this.key)).isEqualTo("1"));
		assertThat(this.proxy.acceptedConnections()).isEqualTo(2);
	}

	private void assertDroppedReplyFailsTheCommandOnceRun(RedisCommands<String, String> commands) {
		FaultyRedisProxy.Fault fault = this.proxy.dropNextReplyTo(FaultyRedisProxy.named("EVAL"));
		assertThatExceptionOfType(RedisException.class)
			.isThrownBy(() -> commands.eval(INCR_SCRIPT, ScriptOutputType.INTEGER, this.key))
			.withMessageContaining("disconnected");
		assertThat(fault.hasFired()).isTrue();
		assertThat(direct.sync().get(this.key)).isEqualTo("1");
		assertThat(this.proxy.forwardedCount(FaultyRedisProxy.named("EVAL"))).isOne();
	}

	@Test
	void droppedReplyFailsTheCommandWithoutReplayWhenAutoReconnectIsOff() {
		ClientOptions options = ClientOptions.builder().autoReconnect(false).build();
		RedisCommands<String, String> commands = connect(options, Duration.ofSeconds(5)).sync();
		assertDroppedReplyFailsTheCommandOnceRun(commands);
	}

	@Test
	void delayedReplyTimesTheClientOutWhileTheCommandRan() {
		RedisCommands<String, String> commands = connect(ClientOptions.create(), Duration.ofMillis(100)).sync();
		FaultyRedisProxy.Fault fault = this.proxy.delayNextReplyTo(FaultyRedisProxy.named("EVAL"),
				Duration.ofMillis(500));
		assertThatExceptionOfType(RedisCommandTimeoutException.class)
			.isThrownBy(() -> commands.eval(INCR_SCRIPT, ScriptOutputType.INTEGER, this.key));
		assertThat(fault.awaitFired(WAIT)).isTrue();
		assertThat(direct.sync().get(this.key)).isEqualTo("1");
		// Once the held reply is let through, the connection is in step again: a retry
		// runs the script twice
		await().atMost(WAIT)
			.ignoreException(RedisCommandTimeoutException.class)
			.untilAsserted(() -> assertThat(commands.get(this.key)).isEqualTo("1"));
		Long incremented = commands.eval(INCR_SCRIPT, ScriptOutputType.INTEGER, this.key);
		assertThat(incremented).isEqualTo(2L);
		assertThat(this.proxy.forwardedCount(FaultyRedisProxy.named("EVAL"))).isEqualTo(2);
		assertThat(this.proxy.acceptedConnections()).isOne();
	}

	@Test
	void delayedReplyToACommandWithAGivenArgumentLeavesOtherCommandsAlone() {
		RedisCommands<String, String> commands = connect(ClientOptions.create(), Duration.ofMillis(200)).sync();
		commands.set(this.key, "value");
		FaultyRedisProxy.Fault fault = this.proxy.delayNextReplyToCommand(
				FaultyRedisProxy.withArgumentContaining("GET", this.key + ":held"), Duration.ofMillis(600));
		assertThat(commands.get(this.key)).isEqualTo("value");
		assertThat(fault.hasFired()).isFalse();
		assertThatExceptionOfType(RedisCommandTimeoutException.class)
			.isThrownBy(() -> commands.get(this.key + ":held"));
		assertThat(fault.awaitFired(WAIT)).isTrue();
		assertThat(fault.firedOn()).isEqualTo("GET");
	}

	@ParameterizedTest(name = "RESP2 forced: {0}")
	@ValueSource(booleans = { false, true })
	void lettucePubSubWorksThroughTheProxy(boolean resp2) {
		this.proxy.forceResp2(resp2);
		FaultyRedisProxy.Fault fault = this.proxy.dropNextReplyTo(FaultyRedisProxy.named("SUBSCRIBE"));
		RedisClient client = client(ClientOptions.create(), Duration.ofSeconds(5));
		StatefulRedisPubSubConnection<String, String> subscriber = client.connectPubSub();
		this.toClose.add(subscriber);
		Queue<String> received = new ConcurrentLinkedQueue<>();
		subscriber.addListener(new RedisPubSubAdapter<>() {

			@Override
			public void message(String channel, String message) {
				received.add(channel + ":" + message);
			}

		});
		subscriber.sync().subscribe(this.key);
		StatefulRedisConnection<String, String> publisher = client.connect();
		this.toClose.add(publisher);
		assertThat(publisher.sync().publish(this.key, "one")).isOne();
		assertThat(publisher.sync().publish(this.key, "two")).isOne();
		await().atMost(WAIT).until(() -> received.size() == 2);
		assertThat(received).containsExactly(this.key + ":one", this.key + ":two");
		assertThat(fault.hasFired()).isFalse();
		assertThat(fault.cancel()).isTrue();
	}

	@Test
	void cutAllMakesLettuceReconnect() {
		RedisCommands<String, String> commands = connect(ClientOptions.create(), Duration.ofSeconds(5)).sync();
		commands.set(this.key, "value");
		this.proxy.cutAll();
		await().atMost(WAIT)
			.ignoreException(RedisException.class)
			.untilAsserted(() -> assertThat(commands.get(this.key)).isEqualTo("value"));
		assertThat(this.proxy.acceptedConnections()).isEqualTo(2);
		assertThat(this.proxy.openConnections()).isOne();
	}

	@Test
	void pauseHoldsCommandsUntilResumed() throws Exception {
		RedisAsyncCommands<String, String> commands = connect(ClientOptions.create(), Duration.ofSeconds(5)).async();
		commands.set(this.key, "value").get(5, TimeUnit.SECONDS);
		this.proxy.pause();
		RedisFuture<String> value = commands.get(this.key);
		await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> !value.isDone());
		this.proxy.resume();
		assertThat(value.get(5, TimeUnit.SECONDS)).isEqualTo("value");
	}

	@Test
	void latencyHoldsEachReplyInOrderWithoutHoldingPipelinedRepliesOneAfterAnother() throws Exception {
		Duration latency = Duration.ofMillis(300);
		StatefulRedisConnection<String, String> connection = connect(ClientOptions.create(), Duration.ofSeconds(30));
		connection.sync().set(this.key, "value");
		this.proxy.latency(latency);
		long started = System.nanoTime();
		assertThat(connection.sync().get(this.key)).isEqualTo("value");
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("a reply held for the latency")
			.isGreaterThanOrEqualTo(latency);
		// Held one after another, 50 replies would take 15 s.
		RedisAsyncCommands<String, String> async = connection.async();
		connection.setAutoFlushCommands(false);
		List<RedisFuture<Long>> increments = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			increments.add(async.incr(this.key + ":counter"));
		}
		connection.flushCommands();
		connection.setAutoFlushCommands(true);
		assertThat(LettuceFutures.awaitAll(latency.multipliedBy(10), increments.toArray(new RedisFuture<?>[0])))
			.as("pipelined replies held each for the latency, not one after another")
			.isTrue();
		for (int i = 0; i < 50; i++) {
			assertThat(increments.get(i).get()).isEqualTo(i + 1);
		}
		this.proxy.latency(Duration.ZERO);
		assertThat(connection.sync().del(this.key + ":counter")).isOne();
	}

	@Test
	void latencyMustNotBeNegative() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.proxy.latency(Duration.ofMillis(-1)))
			.withMessage("The latency must not be negative, but was PT-0.001S");
	}

	@Test
	void springTrafficPassesThrough() {
		StringRedisTemplate template = template();
		template.opsForValue().set(this.key, "value");
		assertThat(template.opsForValue().get(this.key)).isEqualTo("value");
		List<Object> pipelined = template.executePipelined((RedisCallback<Object>) (connection) -> {
			for (int i = 0; i < 10; i++) {
				connection.stringCommands().incr((this.key + ":counter").getBytes());
			}
			return null;
		});
		assertThat(pipelined).hasSize(10).last().isEqualTo(10L);
		template.delete(this.key + ":counter");
		assertThat(template.execute(RedisScript.of(INCR_SCRIPT, Long.class), List.of(this.key + ":counter")))
			.isEqualTo(1L);
		template.delete(this.key + ":counter");
	}

	@Test
	void springScriptWhoseReplyIsDroppedRunsTwice() {
		StringRedisTemplate template = template();
		RedisScript<Long> script = RedisScript.of(INCR_SCRIPT, Long.class);
		// Loads the script: EVALSHA fails with NOSCRIPT, then EVAL runs it
		assertThat(template.execute(script, List.of(this.key))).isEqualTo(1L);
		int evalShas = this.proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"));
		FaultyRedisProxy.Fault fault = this.proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
		assertThat(template.execute(script, List.of(this.key))).isEqualTo(3L);
		assertThat(fault.hasFired()).isTrue();
		assertThat(this.proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"))).isEqualTo(evalShas + 2);
		assertThat(direct.sync().get(this.key)).isEqualTo("3");
	}

	@Test
	void springPubSubWorksThroughTheProxy() throws Exception {
		StringRedisTemplate template = template();
		RedisMessageListenerContainer container = new RedisMessageListenerContainer();
		container.setConnectionFactory(template.getRequiredConnectionFactory());
		Queue<String> received = new ConcurrentLinkedQueue<>();
		container.addMessageListener((message, pattern) -> received.add(new String(message.getBody())),
				new ChannelTopic(this.key));
		container.afterPropertiesSet();
		container.start();
		this.toClose.add(container::destroy);
		await().atMost(WAIT).untilAsserted(() -> {
			template.convertAndSend(this.key, "hello");
			assertThat(received).isNotEmpty();
		});
		assertThat(received).allMatch("hello"::equals);
	}

	private StatefulRedisConnection<String, String> connect(ClientOptions options, Duration timeout) {
		StatefulRedisConnection<String, String> connection = client(options, timeout).connect();
		this.toClose.add(connection);
		return connection;
	}

	private RedisClient client(ClientOptions options, Duration timeout) {
		RedisURI uri = redisUri(this.proxy.host(), this.proxy.port());
		uri.setTimeout(timeout);
		RedisClient client = RedisClient.create(resources, uri);
		client.setOptions(options);
		this.toClose.add(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
		return client;
	}

	private StringRedisTemplate template() {
		TestRedis redis = TestRedis.shared();
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(this.proxy.host(),
				this.proxy.port());
		configuration.setDatabase(redis.database());
		configuration.setUsername(redis.username());
		if (redis.password() != null) {
			configuration.setPassword(redis.password());
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().clientResources(resources).build());
		factory.afterPropertiesSet();
		factory.start();
		this.toClose.add(factory::destroy);
		return new StringRedisTemplate(factory);
	}

	private static RedisURI redisUri(String host, int port) {
		TestRedis redis = TestRedis.shared();
		RedisURI.Builder builder = RedisURI.builder().withHost(host).withPort(port).withDatabase(redis.database());
		String password = redis.password();
		if (password != null) {
			String username = redis.username();
			builder = (username != null) ? builder.withAuthentication(username, password)
					: builder.withPassword(password.toCharArray());
		}
		return builder.build();
	}

}
