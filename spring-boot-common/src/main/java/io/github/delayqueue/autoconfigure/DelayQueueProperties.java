package io.github.delayqueue.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.listener.GroupOrder;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.schedule.MisfirePolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of the delay queue. They validate themselves when bound, so
 * that a value that cannot work fails the startup with a message naming the property.
 */
@ConfigurationProperties("delay-queue")
public class DelayQueueProperties implements Validator {

	/**
	 * Whether to auto-configure the delay queue.
	 */
	private boolean enabled = true;

	/**
	 * Prefix of every Redis key the queue writes; a topic's keys are
	 * "<prefix>:{<topic>}:<kind>". At most 100 characters, without braces, whitespace or
	 * control characters.
	 */
	private String keyPrefix = "dq";

	/**
	 * Largest payload that send accepts, measured after conversion to bytes.
	 */
	private DataSize maxPayloadSize = DataSize.ofMegabytes(1);

	/**
	 * Longest wait of the Redis client between two attempts to reconnect after Redis was
	 * lost, so that the queue recovers soon after Redis is back. Applies when Spring Boot
	 * builds the Lettuce client resources; zero or negative leaves the client's own
	 * backoff (up to 30 seconds).
	 */
	private Duration redisReconnectMaxDelay = Duration.ofSeconds(1);

	/**
	 * Whether a key under "delay-queue." that no property binds (a typo such as
	 * "delay-queue.listner.max-attempts") fails the startup; otherwise each is logged as
	 * a warning naming the closest known key.
	 */
	private boolean failOnUnknownProperties;

	/**
	 * Defaults for every @DelayListener.
	 */
	private final Listener listener = new Listener();

	/**
	 * Brokers, which move due messages to the ready list of each topic that has a
	 * listener here.
	 */
	private final Broker broker = new Broker();

	/**
	 * Sending.
	 */
	private final Producer producer = new Producer();

	/**
	 * Micrometer metrics.
	 */
	private final Metrics metrics = new Metrics();

	/**
	 * Per-topic settings, keyed by topic name; each overrides the matching listener
	 * setting.
	 */
	private final Map<String, Topic> topics = new LinkedHashMap<>();

	/**
	 * Recurring messages, keyed by schedule name: each is saved in Redis at startup (the
	 * same definition in several instances is one schedule) and sends a message to its
	 * topic at each tick, once across the instances.
	 */
	private final Map<String, ScheduleProperties> schedules = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public DataSize getMaxPayloadSize() {
		return this.maxPayloadSize;
	}

	public void setMaxPayloadSize(DataSize maxPayloadSize) {
		this.maxPayloadSize = maxPayloadSize;
	}

	public Duration getRedisReconnectMaxDelay() {
		return this.redisReconnectMaxDelay;
	}

	public void setRedisReconnectMaxDelay(Duration redisReconnectMaxDelay) {
		this.redisReconnectMaxDelay = redisReconnectMaxDelay;
	}

	public boolean isFailOnUnknownProperties() {
		return this.failOnUnknownProperties;
	}

	public void setFailOnUnknownProperties(boolean failOnUnknownProperties) {
		this.failOnUnknownProperties = failOnUnknownProperties;
	}

	public Listener getListener() {
		return this.listener;
	}

	public Broker getBroker() {
		return this.broker;
	}

	public Producer getProducer() {
		return this.producer;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	public Map<String, Topic> getTopics() {
		return this.topics;
	}

	public Map<String, ScheduleProperties> getSchedules() {
		return this.schedules;
	}

	@Override
	public boolean supports(Class<?> type) {
		return DelayQueueProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		DelayQueuePropertiesValidation.validate((DelayQueueProperties) target, errors);
	}

	/**
	 * A text value for a {@code toString}: quoted, cut after 100 characters.
	 */
	private static String quoted(@Nullable String value) {
		if (value == null) {
			return "null";
		}
		return "'" + ((value.length() > 100) ? value.substring(0, 100) + "...' (" + value.length() + " characters)"
				: value + "'");
	}

	/**
	 * Defaults for every {@code @DelayListener}.
	 */
	public static class Listener {

		/**
		 * How many messages of one topic an application handles at once; at most 1000.
		 */
		private int concurrency = 1;

		/**
		 * Most claimed messages that may wait in this application for a free handler, at
		 * most 1000; 0 claims only for free handlers. Within it, a listener claims ahead
		 * as many as its handlers finish in about 10 ms, judged from how long they take:
		 * many while a backlog is due and the handlers are fast, none while they are slow
		 * or have not finished a message yet.
		 */
		private int prefetch = 256;

		/**
		 * Deliveries a message gets before it goes to the dead-letter set.
		 */
		private int maxAttempts = 5;

		/**
		 * How long a claimed message stays leased to its consumer; a message not
		 * acknowledged by then is delivered again.
		 */
		private Duration visibilityTimeout = Duration.ofSeconds(30);

		/**
		 * Longest time an idle listener waits for a wake-up signal before it checks Redis
		 * anyway (at most about a quarter more: while the topic's broker here read the
		 * ready lists empty lately, its call counts as the check).
		 */
		private Duration idleCheckInterval = Duration.ofSeconds(5);

		/**
		 * How long stopping (or pausing) the listeners may take, at most 36500d. Running
		 * handlers get it less a reserve of a tenth (at least 100 ms, or half the timeout
		 * when that is less; at most 1 s), in which messages still unfinished are handed
		 * back to the ready list and the last acknowledgements sent; the stop then
		 * returns, however Redis answers: a message Redis did not take back is delivered
		 * again when its lease expires. Messages not yet handed to a handler go back as
		 * soon as the stop begins.
		 */
		private Duration shutdownTimeout = Duration.ofSeconds(30);

		/**
		 * How long a handler may run while its lease is extended in the background; past
		 * it the lease runs out and the message is delivered again.
		 */
		private Duration maxHandlingTime = Duration.ofMinutes(10);

		/**
		 * What to do with a message claimed later than the late threshold after its due
		 * time.
		 */
		private LatePolicy latePolicy = LatePolicy.DELIVER;

		/**
		 * How late after its due time a message may be claimed before the late policy
		 * applies.
		 */
		private Duration lateThreshold = Duration.ofHours(1);

		/**
		 * Exception classes not retried by any listener: a failure whose exception, or
		 * one of its causes, is one of them is dead-lettered at once. Applies together
		 * with a topic's own and the annotation's.
		 */
		private List<Class<?>> noRetryFor = new ArrayList<>();

		/**
		 * Exponential backoff between delivery attempts.
		 */
		private final Backoff backoff = new Backoff();

		/**
		 * How many dead letters each topic keeps, and how long, unless the topic sets its
		 * own; every dead letter is kept when unset.
		 */
		private final DeadLetters deadLetters = new DeadLetters();

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public int getPrefetch() {
			return this.prefetch;
		}

		public void setPrefetch(int prefetch) {
			this.prefetch = prefetch;
		}

		public int getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public Duration getVisibilityTimeout() {
			return this.visibilityTimeout;
		}

		public void setVisibilityTimeout(Duration visibilityTimeout) {
			this.visibilityTimeout = visibilityTimeout;
		}

		public Duration getIdleCheckInterval() {
			return this.idleCheckInterval;
		}

		public void setIdleCheckInterval(Duration idleCheckInterval) {
			this.idleCheckInterval = idleCheckInterval;
		}

		public Duration getShutdownTimeout() {
			return this.shutdownTimeout;
		}

		public void setShutdownTimeout(Duration shutdownTimeout) {
			this.shutdownTimeout = shutdownTimeout;
		}

		public LatePolicy getLatePolicy() {
			return this.latePolicy;
		}

		public void setLatePolicy(LatePolicy latePolicy) {
			this.latePolicy = latePolicy;
		}

		public Duration getLateThreshold() {
			return this.lateThreshold;
		}

		public void setLateThreshold(Duration lateThreshold) {
			this.lateThreshold = lateThreshold;
		}

		public List<Class<?>> getNoRetryFor() {
			return this.noRetryFor;
		}

		public void setNoRetryFor(List<Class<?>> noRetryFor) {
			this.noRetryFor = noRetryFor;
		}

		public Duration getMaxHandlingTime() {
			return this.maxHandlingTime;
		}

		public void setMaxHandlingTime(Duration maxHandlingTime) {
			this.maxHandlingTime = maxHandlingTime;
		}

		public Backoff getBackoff() {
			return this.backoff;
		}

		public DeadLetters getDeadLetters() {
			return this.deadLetters;
		}

	}

	/**
	 * Exponential backoff between delivery attempts.
	 */
	public static class Backoff {

		/**
		 * Wait before the second attempt.
		 */
		private Duration initialInterval = Duration.ofSeconds(1);

		/**
		 * Factor applied to the wait after each further failed attempt.
		 */
		private double multiplier = 2.0;

		/**
		 * Longest wait between two attempts.
		 */
		private Duration maxInterval = Duration.ofMinutes(10);

		public Duration getInitialInterval() {
			return this.initialInterval;
		}

		public void setInitialInterval(Duration initialInterval) {
			this.initialInterval = initialInterval;
		}

		public double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(double multiplier) {
			this.multiplier = multiplier;
		}

		public Duration getMaxInterval() {
			return this.maxInterval;
		}

		public void setMaxInterval(Duration maxInterval) {
			this.maxInterval = maxInterval;
		}

	}

	/**
	 * Brokers, which move due messages to the ready list of each topic that has a
	 * listener here.
	 */
	public static class Broker {

		/**
		 * Largest number of messages one promote script moves (1 to 1000); bounds how
		 * long Redis is busy per call.
		 */
		private int batchSize = 1000;

		/**
		 * Longest time a broker sleeps without checking Redis when no wake-up signal
		 * arrives.
		 */
		private Duration maxSleep = Duration.ofSeconds(5);

		/**
		 * How long before their due time messages are handed to listeners, which hold
		 * them and invoke the method at the due time by the Redis clock: delivery to a
		 * fraction of a millisecond, and Redis works in batches. A message this close to
		 * its due time may already be in flight, so cancelling or rescheduling it can
		 * fail. Zero hands messages over only once they are due.
		 */
		private Duration lookahead = Duration.ofMillis(20);

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

		public Duration getMaxSleep() {
			return this.maxSleep;
		}

		public void setMaxSleep(Duration maxSleep) {
			this.maxSleep = maxSleep;
		}

		public Duration getLookahead() {
			return this.lookahead;
		}

		public void setLookahead(Duration lookahead) {
			this.lookahead = lookahead;
		}

	}

	/**
	 * Sending.
	 */
	public static class Producer {

		/**
		 * Whether a send inside an active Spring transaction is held back until the
		 * transaction commits, and dropped if it rolls back.
		 */
		private boolean transactionAware = true;

		/**
		 * Longest time a send, cancel or reschedule waits for Redis, whatever the Redis
		 * client's own command timeout is; also the bound of every other call of the
		 * queue to Redis. A send that times out throws SendFailedException, which carries
		 * the message ids, since Redis may have stored them.
		 */
		private Duration sendTimeout = Duration.ofSeconds(5);

		/**
		 * Most ids of handled messages sent with a deduplication window that each
		 * partition of a topic remembers, from 1 to 10,000,000; past it, the ids whose
		 * windows end first are forgotten.
		 */
		private int maxRememberedIds = 100_000;

		/**
		 * Confirmation of sends by replicas.
		 */
		private final Replication replication = new Replication();

		public Replication getReplication() {
			return this.replication;
		}

		public int getMaxRememberedIds() {
			return this.maxRememberedIds;
		}

		public void setMaxRememberedIds(int maxRememberedIds) {
			this.maxRememberedIds = maxRememberedIds;
		}

		public Duration getSendTimeout() {
			return this.sendTimeout;
		}

		public void setSendTimeout(Duration sendTimeout) {
			this.sendTimeout = sendTimeout;
		}

		public boolean isTransactionAware() {
			return this.transactionAware;
		}

		public void setTransactionAware(boolean transactionAware) {
			this.transactionAware = transactionAware;
		}

	}

	/**
	 * Confirmation of sends by replicas: Redis replicates asynchronously, so a send
	 * acknowledged just before its primary fails can be lost with it.
	 */
	public static class Replication {

		/**
		 * Replicas that must confirm a send's writes (Redis WAIT) before send and sendAll
		 * return; 0 does not wait. When fewer confirm within the timeout, the send throws
		 * SendFailedException caused by NotReplicatedException: the messages are on the
		 * primary, and are lost only if it fails before its replicas catch up.
		 */
		private int minReplicas;

		/**
		 * Longest wait for the replicas' confirmation, on top of the send timeout.
		 */
		private Duration timeout = Duration.ofSeconds(1);

		public int getMinReplicas() {
			return this.minReplicas;
		}

		public void setMinReplicas(int minReplicas) {
			this.minReplicas = minReplicas;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

	/**
	 * Micrometer metrics.
	 */
	public static class Metrics {

		/**
		 * Percentiles of the lateness timer computed in the application, e.g. 0.5, 0.99.
		 */
		private double[] latenessPercentiles = new double[0];

		/**
		 * Whether the lateness timer publishes a histogram for percentiles computed by
		 * the backend.
		 */
		private boolean latenessHistogram;

		/**
		 * How often at most the gauges of a topic read Redis, all of them in one call.
		 */
		private Duration gaugeRefreshInterval = Duration.ofSeconds(10);

		/**
		 * Topics whose gauges this application publishes besides those it listens to,
		 * configures under 'delay-queue.topics' or sends schedules to: a topic another
		 * application consumes, or one nobody consumes yet, so that its lateness can be
		 * watched and alerted on.
		 */
		private List<String> topics = new ArrayList<>();

		public List<String> getTopics() {
			return this.topics;
		}

		public void setTopics(List<String> topics) {
			this.topics = topics;
		}

		public Duration getGaugeRefreshInterval() {
			return this.gaugeRefreshInterval;
		}

		public void setGaugeRefreshInterval(Duration gaugeRefreshInterval) {
			this.gaugeRefreshInterval = gaugeRefreshInterval;
		}

		public double[] getLatenessPercentiles() {
			return this.latenessPercentiles;
		}

		public void setLatenessPercentiles(double[] latenessPercentiles) {
			this.latenessPercentiles = latenessPercentiles;
		}

		public boolean isLatenessHistogram() {
			return this.latenessHistogram;
		}

		public void setLatenessHistogram(boolean latenessHistogram) {
			this.latenessHistogram = latenessHistogram;
		}

	}

	/**
	 * A recurring message.
	 */
	public static class ScheduleProperties {

		/**
		 * The topic each tick's message is sent to.
		 */
		private @Nullable String topic;

		/**
		 * Spring's six-field cron expression (second minute hour day month weekday), or a
		 * macro such as '@hourly' or '@daily'; set this or fixed-rate.
		 */
		private @Nullable String cron;

		/**
		 * The time between ticks, from the first save of the schedule, at least 100ms;
		 * set this or cron.
		 */
		private @Nullable Duration fixedRate;

		/**
		 * The time zone of the cron expression (UTC when unset); its daylight-saving
		 * changes are followed as Spring's CronExpression does. Not for a fixed rate.
		 */
		private @Nullable ZoneId zone;

		/**
		 * The payload of each tick's message, as text (JSON for a typed listener).
		 */
		private String payload = "";

		/**
		 * What is sent for ticks missed while no instance could send them (more than one
		 * tick due at once, or a single tick more than a minute late): one message for
		 * all of them, none, or one each (at most 1000).
		 */
		private MisfirePolicy misfire = MisfirePolicy.FIRE_ONCE;

		public @Nullable String getTopic() {
			return this.topic;
		}

		public void setTopic(@Nullable String topic) {
			this.topic = topic;
		}

		public @Nullable String getCron() {
			return this.cron;
		}

		public void setCron(@Nullable String cron) {
			this.cron = cron;
		}

		public @Nullable Duration getFixedRate() {
			return this.fixedRate;
		}

		public void setFixedRate(@Nullable Duration fixedRate) {
			this.fixedRate = fixedRate;
		}

		public @Nullable ZoneId getZone() {
			return this.zone;
		}

		public void setZone(@Nullable ZoneId zone) {
			this.zone = zone;
		}

		public String getPayload() {
			return this.payload;
		}

		public void setPayload(String payload) {
			this.payload = payload;
		}

		public MisfirePolicy getMisfire() {
			return this.misfire;
		}

		public void setMisfire(MisfirePolicy misfire) {
			this.misfire = misfire;
		}

		/**
		 * Names the schedule's settings, as a bind failure shows its value.
		 */
		@Override
		public String toString() {
			return "topic=" + quoted(this.topic) + ", cron=" + quoted(this.cron) + ", fixed-rate=" + this.fixedRate
					+ ", zone=" + this.zone + ", payload=" + quoted(this.payload) + ", misfire=" + this.misfire;
		}

	}

	/**
	 * Settings of one topic; unset values fall back to {@code delay-queue.listener.*}.
	 */
	public static class Topic {

		/**
		 * How many messages of this topic an application handles at once; at most 1000.
		 */
		private @Nullable Integer concurrency;

		/**
		 * Most messages of one group in flight at once, across every application
		 * consuming the topic, from 1 to 1000; empty for no limit. With 1, a group's
		 * messages are handled one at a time.
		 */
		private @Nullable Integer groupConcurrency;

		/**
		 * What a message of a group that fails does to its group: 'relaxed' (it waits for
		 * its next attempt in the schedule; later messages of its group may pass it) or
		 * 'strict' (it waits in its group, which waits with it: no later message passes
		 * it).
		 */
		private GroupOrder groupOrder = GroupOrder.RELAXED;

		/**
		 * Weights of groups that take longer turns than the others while groups wait: a
		 * group of weight w (1 to 100) is served w times as much as a group of weight 1,
		 * which every group not named has. At most 100 groups; a name with dots or other
		 * special characters goes in brackets ('group-weights.[shop.17]=3'). Shares
		 * turns, not the group concurrency.
		 */
		private Map<String, Integer> groupWeights = new LinkedHashMap<>();

		/**
		 * Deliveries a message of this topic gets before it goes to the dead-letter set.
		 */
		private @Nullable Integer maxAttempts;

		/**
		 * How long a claimed message of this topic stays leased to its consumer.
		 */
		private @Nullable Duration visibilityTimeout;

		/**
		 * Most messages a batch listener of this topic receives in one call, from 1 to
		 * 1000; 100 when unset.
		 */
		private @Nullable Integer maxBatchSize;

		/**
		 * How long a batch listener of this topic waits to fill a batch once its first
		 * message is due, at most a minute; 100 milliseconds when unset.
		 */
		private @Nullable Duration batchTimeout;

		/**
		 * Exception classes not retried by this topic's listener, together with
		 * {@code delay-queue.listener.no-retry-for}: a failure whose exception, or one of
		 * its causes, is one of them is dead-lettered at once.
		 */
		private List<Class<?>> noRetryFor = new ArrayList<>();

		/**
		 * Backoff between the attempts of a message of this topic, over the listener's.
		 */
		private final TopicBackoff backoff = new TopicBackoff();

		/**
		 * How many dead letters this topic keeps, and how long, over the listener's; each
		 * bound unset falls back to {@code delay-queue.listener.dead-letters.*}.
		 */
		private final DeadLetters deadLetters = new DeadLetters();

		/**
		 * Most deliveries of this topic started in any window of a period, by every
		 * application together; none when unset.
		 */
		private final TopicRateLimit rateLimit = new TopicRateLimit();

		/**
		 * Most deliveries of one group of the topic in any window, across every
		 * application together.
		 */
		private final GroupRateLimit groupRateLimit = new GroupRateLimit();

		/**
		 * How many partitions the topic is spread over, each in its own hash slot (on its
		 * own node of a Redis Cluster) with its own broker and listener. Every
		 * application of the topic must use the same number.
		 */
		private int partitions = 1;

		/**
		 * What to do with a message of this topic claimed later than its late threshold.
		 */
		private @Nullable LatePolicy latePolicy;

		/**
		 * How late a message of this topic may be claimed before the late policy applies.
		 */
		private @Nullable Duration lateThreshold;

		public int getPartitions() {
			return this.partitions;
		}

		public void setPartitions(int partitions) {
			this.partitions = partitions;
		}

		public @Nullable LatePolicy getLatePolicy() {
			return this.latePolicy;
		}

		public void setLatePolicy(@Nullable LatePolicy latePolicy) {
			this.latePolicy = latePolicy;
		}

		public @Nullable Duration getLateThreshold() {
			return this.lateThreshold;
		}

		public void setLateThreshold(@Nullable Duration lateThreshold) {
			this.lateThreshold = lateThreshold;
		}

		public @Nullable Integer getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(@Nullable Integer concurrency) {
			this.concurrency = concurrency;
		}

		public @Nullable Integer getGroupConcurrency() {
			return this.groupConcurrency;
		}

		public void setGroupConcurrency(@Nullable Integer groupConcurrency) {
			this.groupConcurrency = groupConcurrency;
		}

		public GroupOrder getGroupOrder() {
			return this.groupOrder;
		}

		public void setGroupOrder(GroupOrder groupOrder) {
			this.groupOrder = groupOrder;
		}

		public Map<String, Integer> getGroupWeights() {
			return this.groupWeights;
		}

		public void setGroupWeights(Map<String, Integer> groupWeights) {
			this.groupWeights = groupWeights;
		}

		public @Nullable Integer getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(@Nullable Integer maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public @Nullable Duration getVisibilityTimeout() {
			return this.visibilityTimeout;
		}

		public void setVisibilityTimeout(@Nullable Duration visibilityTimeout) {
			this.visibilityTimeout = visibilityTimeout;
		}

		public @Nullable Integer getMaxBatchSize() {
			return this.maxBatchSize;
		}

		public void setMaxBatchSize(@Nullable Integer maxBatchSize) {
			this.maxBatchSize = maxBatchSize;
		}

		public @Nullable Duration getBatchTimeout() {
			return this.batchTimeout;
		}

		public void setBatchTimeout(@Nullable Duration batchTimeout) {
			this.batchTimeout = batchTimeout;
		}

		public List<Class<?>> getNoRetryFor() {
			return this.noRetryFor;
		}

		public void setNoRetryFor(List<Class<?>> noRetryFor) {
			this.noRetryFor = noRetryFor;
		}

		public TopicBackoff getBackoff() {
			return this.backoff;
		}

		public DeadLetters getDeadLetters() {
			return this.deadLetters;
		}

		public GroupRateLimit getGroupRateLimit() {
			return this.groupRateLimit;
		}

		public TopicRateLimit getRateLimit() {
			return this.rateLimit;
		}

		/**
		 * Names the topic's settings, as a bind failure shows its value.
		 */
		@Override
		public String toString() {
			return "partitions=" + this.partitions + ", concurrency=" + this.concurrency + ", group-concurrency="
					+ this.groupConcurrency + ", group-order=" + this.groupOrder + ", group-weights="
					+ this.groupWeights + ", max-attempts=" + this.maxAttempts + ", visibility-timeout="
					+ this.visibilityTimeout + ", max-batch-size=" + this.maxBatchSize + ", batch-timeout="
					+ this.batchTimeout + ", late-policy=" + this.latePolicy + ", late-threshold=" + this.lateThreshold
					+ ", no-retry-for=" + this.noRetryFor + ", backoff=[" + this.backoff + "], dead-letters=["
					+ this.deadLetters + "], rate-limit=[" + this.rateLimit + "]";
		}

		/**
		 * Old flat name of {@code backoff.initial-interval}.
		 * @return the wait before the second attempt
		 * @deprecated use {@code delay-queue.topics.<topic>.backoff.initial-interval}
		 */
		@Deprecated(since = "0.1.0")
		public @Nullable Duration getBackoffInitialInterval() {
			return this.backoff.getInitialInterval();
		}

		/**
		 * Sets the old flat name of {@code backoff.initial-interval}.
		 * @param backoffInitialInterval the wait before the second attempt
		 * @deprecated use {@code delay-queue.topics.<topic>.backoff.initial-interval}
		 */
		@Deprecated(since = "0.1.0")
		public void setBackoffInitialInterval(@Nullable Duration backoffInitialInterval) {
			this.backoff.setInitialInterval(backoffInitialInterval);
		}

		/**
		 * Old flat name of {@code backoff.multiplier}.
		 * @return the factor per further attempt
		 * @deprecated use {@code delay-queue.topics.<topic>.backoff.multiplier}
		 */
		@Deprecated(since = "0.1.0")
		public @Nullable Double getBackoffMultiplier() {
			return this.backoff.getMultiplier();
		}

		/**
		 * Sets the old flat name of {@code backoff.multiplier}.
		 * @param backoffMultiplier the factor per further attempt
		 * @deprecated use {@code delay-queue.topics.<topic>.backoff.multiplier}
		 */
		@Deprecated(since = "0.1.0")
		public void setBackoffMultiplier(@Nullable Double backoffMultiplier) {
			this.backoff.setMultiplier(backoffMultiplier);
		}

		/**
		 * Old flat name of {@code backoff.max-interval}.
		 * @return the longest wait between two attempts
		 * @deprecated use {@code delay-queue.topics.<topic>.backoff.max-interval}
		 */
		@Deprecated(since = "0.1.0")
		public @Nullable Duration getBackoffMaxInterval() {
			return this.backoff.getMaxInterval();
		}

		/**
		 * Sets the old flat name of {@code backoff.max-interval}.
		 * @param backoffMaxInterval the longest wait between two attempts
		 * @deprecated use {@code delay-queue.topics.<topic>.backoff.max-interval}
		 */
		@Deprecated(since = "0.1.0")
		public void setBackoffMaxInterval(@Nullable Duration backoffMaxInterval) {
			this.backoff.setMaxInterval(backoffMaxInterval);
		}

	}

	/**
	 * Rate limit of one topic: at most {@code limit} deliveries start in any window of
	 * {@code period} (a sliding window, kept in Redis), across every application of the
	 * topic; set both or neither. A topic with several partitions gives each an equal
	 * share of the limit.
	 */
	public static class TopicRateLimit {

		/**
		 * Most deliveries of the topic started in any window of the period, from 1 to
		 * 1000000; no rate limit when unset.
		 */
		private @Nullable Integer limit;

		/**
		 * Length of the sliding window the limit holds in, at most a day; no rate limit
		 * when unset.
		 */
		private @Nullable Duration period;

		public @Nullable Integer getLimit() {
			return this.limit;
		}

		public void setLimit(@Nullable Integer limit) {
			this.limit = limit;
		}

		public @Nullable Duration getPeriod() {
			return this.period;
		}

		public void setPeriod(@Nullable Duration period) {
			this.period = period;
		}

		@Override
		public String toString() {
			return "limit=" + this.limit + ", period=" + this.period;
		}

	}

	/**
	 * A rate limit of each group of a topic, across every application together: a group
	 * that used it up waits, paused, until its next message is on time, while the other
	 * groups go on.
	 */
	public static class GroupRateLimit {

		/**
		 * Most claims of one group in any window of the period, from 1 to 1000000: its
		 * messages are claimed at least period / limit apart (no burst; at most about
		 * 1000 a second for one group); no per-group rate limit when unset.
		 */
		private @Nullable Integer limit;

		/**
		 * Length of the window the limit of each group holds in, at most a day; no
		 * per-group rate limit when unset.
		 */
		private @Nullable Duration period;

		public @Nullable Integer getLimit() {
			return this.limit;
		}

		public void setLimit(@Nullable Integer limit) {
			this.limit = limit;
		}

		public @Nullable Duration getPeriod() {
			return this.period;
		}

		public void setPeriod(@Nullable Duration period) {
			this.period = period;
		}

		@Override
		public String toString() {
			return "limit=" + this.limit + ", period=" + this.period;
		}

	}

	/**
	 * Dead-letter retention (as BullMQ's {@code removeOnFail}): the call that buries a
	 * dead letter deletes the oldest beyond either bound, at most 100 a call.
	 */
	public static class DeadLetters {

		/**
		 * The most dead letters kept; all when unset. A partitioned topic divides it
		 * among its partitions, at least one each.
		 */
		private @Nullable Long maxCount;

		/**
		 * How long a dead letter is kept; for ever when unset.
		 */
		private @Nullable Duration maxAge;

		public @Nullable Long getMaxCount() {
			return this.maxCount;
		}

		public void setMaxCount(@Nullable Long maxCount) {
			this.maxCount = maxCount;
		}

		public @Nullable Duration getMaxAge() {
			return this.maxAge;
		}

		public void setMaxAge(@Nullable Duration maxAge) {
			this.maxAge = maxAge;
		}

		@Override
		public String toString() {
			return "max-count=" + this.maxCount + ", max-age=" + this.maxAge;
		}

	}

	/**
	 * Backoff of one topic; each value unset falls back to the listener's.
	 */
	public static class TopicBackoff {

		/**
		 * Wait before the second attempt.
		 */
		private @Nullable Duration initialInterval;

		/**
		 * Factor applied to the wait after each further failed attempt.
		 */
		private @Nullable Double multiplier;

		/**
		 * Longest wait between two attempts.
		 */
		private @Nullable Duration maxInterval;

		public @Nullable Duration getInitialInterval() {
			return this.initialInterval;
		}

		public void setInitialInterval(@Nullable Duration initialInterval) {
			this.initialInterval = initialInterval;
		}

		public @Nullable Double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(@Nullable Double multiplier) {
			this.multiplier = multiplier;
		}

		public @Nullable Duration getMaxInterval() {
			return this.maxInterval;
		}

		public void setMaxInterval(@Nullable Duration maxInterval) {
			this.maxInterval = maxInterval;
		}

		@Override
		public String toString() {
			return "initial-interval=" + this.initialInterval + ", multiplier=" + this.multiplier + ", max-interval="
					+ this.maxInterval;
		}

	}

	/**
	 * The operators' web dashboard (with Spring Boot Actuator and Spring MVC).
	 */
	private final Dashboard dashboard = new Dashboard();

	public Dashboard getDashboard() {
		return this.dashboard;
	}

	/**
	 * The delayQueue health contributor (with Spring Boot Actuator).
	 */
	private final Health health = new Health();

	public Health getHealth() {
		return this.health;
	}

	/**
	 * The delayQueue health contributor (with Spring Boot Actuator).
	 */
	public static class Health {

		/**
		 * How late the oldest waiting message of a topic with a listener here may be
		 * before the health contributor reports the lateness status; unset, lateness
		 * never changes the health.
		 */
		private @Nullable Duration maxLateness;

		/**
		 * Health status reported when a topic's oldest waiting message is later than
		 * max-lateness.
		 */
		private LatenessStatus latenessStatus = LatenessStatus.OUT_OF_SERVICE;

		/**
		 * Longest time the health contributor waits for Redis, whatever the Redis
		 * client's own command timeout is; past it the health is DOWN.
		 */
		private Duration timeout = Duration.ofSeconds(2);

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public @Nullable Duration getMaxLateness() {
			return this.maxLateness;
		}

		public void setMaxLateness(@Nullable Duration maxLateness) {
			this.maxLateness = maxLateness;
		}

		public LatenessStatus getLatenessStatus() {
			return this.latenessStatus;
		}

		public void setLatenessStatus(LatenessStatus latenessStatus) {
			this.latenessStatus = latenessStatus;
		}

		/**
		 * Health status of a topic whose messages are too late.
		 */
		public enum LatenessStatus {

			/** {@code OUT_OF_SERVICE}: the application works, but the queue is behind. */
			OUT_OF_SERVICE,

			/** {@code DOWN}. */
			DOWN

		}

	}

	/**
	 * The operators' web dashboard, served by the application itself.
	 */
	public static class Dashboard {

		/**
		 * Whether the application serves the dashboard. Off by default: turn it on only
		 * where its path is secured (it shows message payloads and, when the delayqueue
		 * endpoint's access is unrestricted, can cancel and replay them).
		 */
		private boolean enabled;

		/**
		 * Path the dashboard is served at, starting with '/', within the application's
		 * servlet context.
		 */
		private String path = "/delay-queue";

		/**
		 * Longest a dashboard request waits for Redis, whatever the Redis client's own
		 * command timeout is; past it the request answers 503.
		 */
		private Duration timeout = Duration.ofSeconds(5);

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

	}

}
