package io.github.delayqueue.testsupport;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.DeadLetterRetention;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

/**
 * A {@link RedisMessageStore} on the test Redis ({@link TestRedis#shared()}), under a key
 * prefix of its own so that tests never see each other's keys, with the
 * {@link DelayQueueTemplate} and the {@link StringRedisTemplate} a test needs beside it,
 * and no Spring context: what the auto-configuration builds with the default properties
 * (JSON payloads with a default Jackson 3 mapper, 1 MB payloads, transaction-aware sends,
 * a 5 s send timeout, 100,000 remembered ids, no dead-letter retention), minus the
 * listeners. Nothing delivers: messages stay where the test puts them. It is connected
 * when made. Closing it closes the store and its connections.
 */
public final class TestStore implements AutoCloseable {

	/** The auto-configuration's default of {@code delay-queue.max-payload-size}. */
	public static final DataSize MAX_PAYLOAD_SIZE = DataSize.ofMegabytes(1);

	/**
	 * The auto-configuration's default of
	 * {@code delay-queue.producer.max-remembered-ids}.
	 */
	public static final int MAX_REMEMBERED_IDS = 100_000;

	private static @Nullable ClientResources clientResources;

	private final String prefix;

	private final @Nullable FaultyRedisProxy proxy;

	private final LettuceConnectionFactory connectionFactory;

	private final RedisMessageStore store;

	private final DelayQueueTemplate template;

	private final StringRedisTemplate redis;

	private TestStore(Builder builder) {
		this.prefix = builder.prefix;
		this.proxy = builder.behindProxy ? FaultyRedisProxy.start(builder.host, builder.port) : null;
		String host = (this.proxy != null) ? this.proxy.host() : builder.host;
		int port = (this.proxy != null) ? this.proxy.port() : builder.port;
		this.connectionFactory = builder.sharedCredentials ? connect(host, port)
				: connect(new RedisStandaloneConfiguration(host, port));
		RedisMessageStore store = new RedisMessageStore(this.connectionFactory, this.prefix, builder.sendTimeout);
		if (builder.minReplicas > 0) {
			store.confirmReplication(builder.minReplicas, builder.replicationTimeout);
		}
		store.rememberAtMost(builder.maxRememberedIds);
		store.usePartitions(TopicPartitions.of(builder.partitions));
		store.useDeadLetterRetention(builder.deadLetterRetention);
		this.store = store;
		this.template = new DelayQueueTemplate(store, new JsonPayloadConverter(new JsonMapper()),
				builder.maxPayloadSize, builder.transactionAware);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		// Connected before the test, as an application's startup check connects: the
		// first call of a test does not spend its timeout on the connection (nor, the
		// first of a JVM, on loading the client).
		this.redis.execute(RedisConnection::ping, false);
	}

	/**
	 * A store with the default settings on the test Redis.
	 * @return the store, to close
	 */
	public static TestStore create() {
		return builder().build();
	}

	/**
	 * A builder of a store with other settings, or through a proxy.
	 * @return a builder with the default settings
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * @return a new unique key prefix
	 */
	public static String uniquePrefix() {
		return "t" + UUID.randomUUID().toString().substring(0, 8);
	}

	/**
	 * A connection factory to the test Redis, or to a proxy in front of it, with its
	 * database and credentials. The caller destroys it.
	 * @param host the host to connect to
	 * @param port the port to connect to
	 * @return the started connection factory
	 */
	public static LettuceConnectionFactory connect(String host, int port) {
		TestRedis shared = TestRedis.shared();
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(host, port);
		configuration.setDatabase(shared.database());
		if (shared.username() != null) {
			configuration.setUsername(shared.username());
		}
		if (shared.password() != null) {
			configuration.setPassword(shared.password());
		}
		return connect(configuration);
	}

	private static LettuceConnectionFactory connect(RedisStandaloneConfiguration configuration) {
		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().clientResources(clientResources()).build());
		connectionFactory.afterPropertiesSet();
		return connectionFactory;
	}

	/**
	 * The client resources of every test store: the auto-configuration's reconnect
	 * back-off ({@code delay-queue.redis-reconnect-max-delay} of 1 s), so that a test
	 * that cuts connections sees them back as an application would. Shared, as they hold
	 * the client's threads, and never shut down.
	 */
	private static synchronized ClientResources clientResources() {
		if (clientResources == null) {
			clientResources = DefaultClientResources.builder()
				.reconnectDelay(
						Delay.exponential(Duration.ofMillis(1), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
				.build();
		}
		return clientResources;
	}

	/**
	 * @return the key prefix of the store
	 */
	public String prefix() {
		return this.prefix;
	}

	/**
	 * @return the proxy the store's connections go through
	 * @throws IllegalStateException if the store was not built
	 * {@linkplain Builder#behindProxy() behind a proxy}
	 */
	public FaultyRedisProxy proxy() {
		if (this.proxy == null) {
			throw new IllegalStateException("This test store was not built behind a proxy (Builder.behindProxy())");
		}
		return this.proxy;
	}

	/**
	 * @return the store
	 */
	public RedisMessageStore store() {
		return this.store;
	}

	/**
	 * @return a template sending through the store
	 */
	public DelayQueueTemplate template() {
		return this.template;
	}

	/**
	 * @return plain access to the Redis of the store, on its connections
	 */
	public StringRedisTemplate redis() {
		return this.redis;
	}

	/**
	 * @return the connections of the store, for another store under the same prefix
	 */
	public RedisConnectionFactory connectionFactory() {
		return this.connectionFactory;
	}

	@Override
	public void close() {
		try {
			this.store.close();
		}
		finally {
			try {
				this.connectionFactory.destroy();
			}
			finally {
				if (this.proxy != null) {
					this.proxy.close();
				}
			}
		}
	}

	/**
	 * Settings of a {@link TestStore}, the auto-configuration's defaults unless set.
	 */
	public static final class Builder {

		private String prefix = uniquePrefix();

		private String host = TestRedis.shared().host();

		private int port = TestRedis.shared().port();

		private boolean sharedCredentials = true;

		private boolean behindProxy;

		private Duration sendTimeout = RedisMessageStore.DEFAULT_TIMEOUT;

		private int minReplicas;

		private Duration replicationTimeout = Duration.ofSeconds(1);

		private int maxRememberedIds = MAX_REMEMBERED_IDS;

		private DataSize maxPayloadSize = MAX_PAYLOAD_SIZE;

		private boolean transactionAware = true;

		private Map<String, Integer> partitions = Map.of();

		private Function<String, DeadLetterRetention> deadLetterRetention = (topic) -> new DeadLetterRetention(0,
				Duration.ZERO);

		private Builder() {
		}

		/**
		 * @param prefix the key prefix, instead of a unique one
		 * @return this builder
		 */
		public Builder prefix(String prefix) {
			this.prefix = prefix;
			return this;
		}

		/**
		 * Connects through a proxy in front of the test Redis, such as a
		 * {@code FaultyRedisProxy}.
		 * @param host the proxy's host
		 * @param port the proxy's port
		 * @return this builder
		 */
		public Builder via(String host, int port) {
			this.host = host;
			this.port = port;
			return this;
		}

		/**
		 * Connects through a {@link FaultyRedisProxy} of the store's own, in front of the
		 * Redis it would connect to otherwise, started with the store and closed with it:
		 * {@link TestStore#proxy()}.
		 * @return this builder
		 */
		public Builder behindProxy() {
			this.behindProxy = true;
			return this;
		}

		/**
		 * Connects to another Redis than the test Redis, such as a private server or a
		 * proxy in front of one: database 0 and the default user without a password.
		 * @param host its host
		 * @param port its port
		 * @return this builder
		 */
		public Builder on(String host, int port) {
			this.host = host;
			this.port = port;
			this.sharedCredentials = false;
			return this;
		}

		/**
		 * @param sendTimeout the longest wait for Redis of a script call
		 * ({@code delay-queue.producer.send-timeout})
		 * @return this builder
		 */
		public Builder sendTimeout(Duration sendTimeout) {
			this.sendTimeout = sendTimeout;
			return this;
		}

		/**
		 * Makes every send wait for the confirmation of replicas.
		 * @param minReplicas {@code delay-queue.producer.replication.min-replicas}
		 * @param timeout {@code delay-queue.producer.replication.timeout}
		 * @return this builder
		 */
		public Builder confirmReplication(int minReplicas, Duration timeout) {
			this.minReplicas = minReplicas;
			this.replicationTimeout = timeout;
			return this;
		}

		/**
		 * @param maxPayloadSize the largest payload the template accepts
		 * ({@code delay-queue.max-payload-size})
		 * @return this builder
		 */
		public Builder maxPayloadSize(DataSize maxPayloadSize) {
			this.maxPayloadSize = maxPayloadSize;
			return this;
		}

		/**
		 * @param transactionAware whether the template's sends inside a Spring
		 * transaction wait for its commit
		 * ({@code delay-queue.producer.transaction-aware})
		 * @return this builder
		 */
		public Builder transactionAware(boolean transactionAware) {
			this.transactionAware = transactionAware;
			return this;
		}

		/**
		 * @param maxRememberedIds {@code delay-queue.producer.max-remembered-ids}
		 * @return this builder
		 */
		public Builder rememberAtMost(int maxRememberedIds) {
			this.maxRememberedIds = maxRememberedIds;
			return this;
		}

		/**
		 * @param partitions the number of partitions of each partitioned topic
		 * ({@code delay-queue.topics.<topic>.partitions})
		 * @return this builder
		 */
		public Builder partitions(Map<String, Integer> partitions) {
			this.partitions = Map.copyOf(partitions);
			return this;
		}

		/**
		 * @param deadLetterRetention the dead-letter retention of each topic
		 * ({@code delay-queue.listener.dead-letters.*} and
		 * {@code delay-queue.topics.<topic>.dead-letters.*})
		 * @return this builder
		 */
		public Builder deadLetterRetention(Function<String, DeadLetterRetention> deadLetterRetention) {
			this.deadLetterRetention = deadLetterRetention;
			return this;
		}

		/**
		 * @return the store, connected, to close
		 */
		public TestStore build() {
			return new TestStore(this);
		}

	}

}
