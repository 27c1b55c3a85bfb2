package io.github.delayqueue.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.time.Durations;
import org.jspecify.annotations.Nullable;

import org.springframework.validation.Errors;

import static io.github.delayqueue.listener.ListenerSettings.batchTimeoutProblem;
import static io.github.delayqueue.listener.ListenerSettings.groupConcurrencyProblem;
import static io.github.delayqueue.listener.ListenerSettings.maxBatchSizeProblem;

/**
 * Checks bound {@link DelayQueueProperties} that would otherwise fail late or only on
 * some Redis setups, naming each property and its value.
 */
final class DelayQueuePropertiesValidation {

	/** The most ids a partition may be told to remember. */
	static final int MAX_REMEMBERED_IDS = 10_000_000;

	/** Longest key prefix accepted, in characters. */
	static final int MAX_KEY_PREFIX_LENGTH = 100;

	/**
	 * Largest concurrency, and largest prefetch: a listener claims at most this many
	 * messages in one Redis script call, which passes them to Lua's {@code unpack}.
	 */
	static final int MAX_CLAIM = 1000;

	/**
	 * Longest duration a property accepts: about a hundred years, for "as long as it
	 * takes". Far longer ones do not fit the nanoseconds the runtime counts time in.
	 */
	static final Duration MAX_DURATION = Duration.ofDays(36_500);

	/**
	 * A dashboard path: '/', then segments of safe characters, none of dots only, no
	 * trailing '/'.
	 */
	private static final Pattern DASHBOARD_PATH = Pattern.compile("(/(?!\\.+(/|$))[A-Za-z0-9._-]+)+");

	private DelayQueuePropertiesValidation() {
	}

	/**
	 * The schedule the properties of one describe.
	 * @param name its name
	 * @param properties its properties
	 * @return the schedule
	 * @throws RuntimeException naming what is wrong
	 */
	static Schedule schedule(String name, DelayQueueProperties.ScheduleProperties properties) {
		String topic = properties.getTopic();
		if (topic == null) {
			throw new IllegalArgumentException("topic must be set");
		}
		String cron = properties.getCron();
		Duration fixedRate = properties.getFixedRate();
		if ((cron == null) == (fixedRate == null)) {
			throw new IllegalArgumentException(
					"set cron or fixed-rate, " + ((cron == null) ? "but neither is set" : "not both"));
		}
		ZoneId zone = properties.getZone();
		Schedule schedule;
		if (cron != null) {
			schedule = Schedule.cron(name, topic, cron);
			schedule = (zone != null) ? schedule.withZone(zone) : schedule;
		}
		else {
			if (zone != null) {
				throw new IllegalArgumentException("zone is set, but a fixed rate has no time zone (only a cron"
						+ " expression has one): remove zone");
			}
			schedule = Schedule.fixedRate(name, topic, Objects.requireNonNull(fixedRate));
		}
		return schedule.withPayload(properties.getPayload()).withMisfire(properties.getMisfire());
	}

	private static void validateDeadLetters(String field, String property, DelayQueueProperties.DeadLetters deadLetters,
			Errors errors) {
		Long maxCount = deadLetters.getMaxCount();
		if (maxCount != null && maxCount < 1) {
			errors.rejectValue(field + ".maxCount", "invalid",
					property + ".max-count must be at least 1 (unset keeps every dead letter), but was " + maxCount);
		}
		Duration maxAge = deadLetters.getMaxAge();
		if (maxAge != null && maxAge.toMillis() < 1) {
			errors.rejectValue(field + ".maxAge", "invalid",
					property + ".max-age must be at least 1ms (unset keeps dead letters for ever), but was "
							+ Durations.format(maxAge));
		}
	}

	/**
	 * Checks the maximum attempts and the backoff of the listeners or of one topic,
	 * naming the property: what the listener settings would refuse at startup without
	 * naming it.
	 * @param field the prefix of the fields, ending with '.'
	 * @param property the prefix of the properties, ending with '.'
	 */
	private static void validateRetries(String field, String property, @Nullable Integer maxAttempts,
			@Nullable Double multiplier, @Nullable Duration initialInterval, @Nullable Duration maxInterval,
			Errors errors) {
		if (maxAttempts != null && maxAttempts < 1) {
			errors.rejectValue(field + "maxAttempts", "invalid",
					property + "max-attempts must be at least 1, but was " + maxAttempts);
		}
		if (multiplier != null && (!(multiplier >= 1.0) || Double.isInfinite(multiplier))) {
			errors.rejectValue(field + "backoff.multiplier", "invalid",
					property + "backoff.multiplier must be at least 1 (1 for a fixed interval), but was " + multiplier);
		}
		if (initialInterval != null && initialInterval.isNegative()) {
			errors.rejectValue(field + "backoff.initialInterval", "invalid", property
					+ "backoff.initial-interval must not be negative, but was " + Durations.format(initialInterval));
		}
		if (initialInterval != null && maxInterval != null && maxInterval.compareTo(initialInterval) < 0) {
			errors.rejectValue(field + "backoff.maxInterval", "invalid",
					property + "backoff.max-interval must not be less than the initial interval "
							+ Durations.format(initialInterval) + ", but was " + Durations.format(maxInterval));
		}
	}

	private static void validateAtLeastOneMilli(String field, String property, @Nullable Duration duration,
			Errors errors) {
		if (duration != null && duration.compareTo(Duration.ofMillis(1)) < 0) {
			errors.rejectValue(field, "invalid",
					property + " must be at least 1ms, but was " + Durations.format(duration));
		}
	}

	private static void validateNoRetryFor(String field, String property, List<Class<?>> classes, Errors errors) {
		for (Class<?> type : classes) {
			if (!Throwable.class.isAssignableFrom(type)) {
				errors.rejectValue(field, "invalid",
						property + " must name exception classes, but " + type.getName() + " is not a Throwable");
			}
		}
	}

	static void validate(DelayQueueProperties properties, Errors errors) {
		properties.getTopics().keySet().forEach((topic) -> validateTopic(topic, errors));
		properties.getMetrics().getTopics().forEach((topic) -> validateGaugedTopic(topic, errors));
		properties.getTopics().forEach((topic, settings) -> validateBatch(topic, settings, errors));
		properties.getTopics()
			.forEach((topic, settings) -> validateGroupConcurrency(topic, settings.getGroupConcurrency(), errors));
		properties.getTopics()
			.forEach((topic, settings) -> validateGroupWeights(topic, settings.getGroupWeights(), errors));
		properties.getTopics()
			.forEach((topic, settings) -> validateRateLimit(topic, "group-rate-limit", "groupRateLimit",
					settings.getGroupRateLimit().getLimit(), settings.getGroupRateLimit().getPeriod(), 1, errors));
		properties.getTopics()
			.forEach((topic, settings) -> validateRateLimit(topic, settings.getRateLimit(), settings.getPartitions(),
					errors));
		validateKeyPrefix(properties.getKeyPrefix(), errors);
		validateDeadLetters("listener.deadLetters", "delay-queue.listener.dead-letters",
				properties.getListener().getDeadLetters(), errors);
		properties.getTopics()
			.forEach((topic, settings) -> validateDeadLetters("topics[" + topic + "].deadLetters",
					topicProperty(topic, "dead-letters"), settings.getDeadLetters(), errors));
		properties.getSchedules().forEach((name, schedule) -> {
			try {
				schedule(name, schedule);
				long size = schedule.getPayload().getBytes(StandardCharsets.UTF_8).length;
				if (size > properties.getMaxPayloadSize().toBytes()) {
					throw new IllegalArgumentException("payload has " + size
							+ " bytes, but delay-queue.max-payload-size is " + properties.getMaxPayloadSize());
				}
			}
			catch (RuntimeException ex) {
				errors.rejectValue("schedules[" + name + "]", "invalid",
						"delay-queue.schedules." + name + ": " + ex.getMessage());
			}
		});
		validateDashboardPath(properties.getDashboard().getPath(), errors);
		if (properties.getDashboard().getTimeout().isNegative() || properties.getDashboard().getTimeout().isZero()) {
			errors.rejectValue("dashboard.timeout", "invalid",
					"delay-queue.dashboard.timeout must be positive, but was "
							+ Durations.format(properties.getDashboard().getTimeout()));
		}
		validateDurations(properties, errors);
		if (properties.getHealth().getTimeout().compareTo(Duration.ofMillis(1)) < 0) {
			errors.rejectValue("health.timeout", "invalid", "delay-queue.health.timeout must be positive, but was "
					+ Durations.format(properties.getHealth().getTimeout()));
		}
		validateReplication(properties.getProducer().getReplication(), errors);
		int maxRemembered = properties.getProducer().getMaxRememberedIds();
		if (maxRemembered < 1 || maxRemembered > MAX_REMEMBERED_IDS) {
			errors.rejectValue("producer.maxRememberedIds", "invalid",
					"delay-queue.producer.max-remembered-ids must be from 1 to " + MAX_REMEMBERED_IDS + ", but was "
							+ maxRemembered);
		}
		DelayQueueProperties.Listener listener = properties.getListener();
		validateNoRetryFor("listener.noRetryFor", "delay-queue.listener.no-retry-for", listener.getNoRetryFor(),
				errors);
		properties.getTopics()
			.forEach((topic, settings) -> validateNoRetryFor("topics[" + topic + "].noRetryFor",
					topicProperty(topic, "no-retry-for"), settings.getNoRetryFor(), errors));
		validateRetries("listener.", "delay-queue.listener.", listener.getMaxAttempts(),
				listener.getBackoff().getMultiplier(), listener.getBackoff().getInitialInterval(),
				listener.getBackoff().getMaxInterval(), errors);
		validateAtLeastOneMilli("listener.visibilityTimeout", "delay-queue.listener.visibility-timeout",
				listener.getVisibilityTimeout(), errors);
		validateAtLeastOneMilli("listener.maxHandlingTime", "delay-queue.listener.max-handling-time",
				listener.getMaxHandlingTime(), errors);
		validateAtLeastOneMilli("listener.idleCheckInterval", "delay-queue.listener.idle-check-interval",
				listener.getIdleCheckInterval(), errors);
		properties.getTopics().forEach((topic, settings) -> {
			validateRetries("topics[" + topic + "].", topicProperty(topic, ""), settings.getMaxAttempts(),
					settings.getBackoff().getMultiplier(), settings.getBackoff().getInitialInterval(),
					settings.getBackoff().getMaxInterval(), errors);
			validateAtLeastOneMilli("topics[" + topic + "].visibilityTimeout",
					topicProperty(topic, "visibility-timeout"), settings.getVisibilityTimeout(), errors);
		});
		validatePrefetch(listener.getPrefetch(), errors);
		validateConcurrency("listener.concurrency", "delay-queue.listener.concurrency", listener.getConcurrency(),
				errors);
		for (Map.Entry<String, DelayQueueProperties.Topic> topic : properties.getTopics().entrySet()) {
			Integer concurrency = topic.getValue().getConcurrency();
			if (concurrency != null) {
				validateConcurrency("topics[" + topic.getKey() + "].concurrency",
						topicProperty(topic.getKey(), "concurrency"), concurrency, errors);
			}
			validatePartitions(topic.getKey(), topic.getValue().getPartitions(), errors);
		}
	}

	/**
	 * Refuses durations longer than {@link #MAX_DURATION}, and a negative shutdown
	 * timeout.
	 */
	private static void validateDashboardPath(String path, Errors errors) {
		if (!DASHBOARD_PATH.matcher(path).matches()) {
			errors.rejectValue("dashboard.path", "invalid", "delay-queue.dashboard.path must start with '/' and be "
					+ "made of letters, digits and '-', '_', '.', '/' (not ending with '/'), but was '" + path + "'");
		}
	}

	private static void validateDurations(DelayQueueProperties properties, Errors errors) {
		DelayQueueProperties.Listener listener = properties.getListener();
		if (listener.getShutdownTimeout().isNegative()) {
			errors.rejectValue("listener.shutdownTimeout", "invalid",
					"delay-queue.listener.shutdown-timeout must not be negative, but was "
							+ Durations.format(listener.getShutdownTimeout()));
		}
		Map<String, @Nullable Duration> durations = new LinkedHashMap<>();
		durations.put("redis-reconnect-max-delay", properties.getRedisReconnectMaxDelay());
		durations.put("listener.visibility-timeout", listener.getVisibilityTimeout());
		durations.put("listener.idle-check-interval", listener.getIdleCheckInterval());
		durations.put("listener.shutdown-timeout", listener.getShutdownTimeout());
		durations.put("listener.max-handling-time", listener.getMaxHandlingTime());
		durations.put("listener.late-threshold", listener.getLateThreshold());
		durations.put("listener.backoff.initial-interval", listener.getBackoff().getInitialInterval());
		durations.put("listener.backoff.max-interval", listener.getBackoff().getMaxInterval());
		durations.put("broker.max-sleep", properties.getBroker().getMaxSleep());
		durations.put("broker.lookahead", properties.getBroker().getLookahead());
		durations.put("producer.send-timeout", properties.getProducer().getSendTimeout());
		durations.put("producer.replication.timeout", properties.getProducer().getReplication().getTimeout());
		durations.put("metrics.gauge-refresh-interval", properties.getMetrics().getGaugeRefreshInterval());
		durations.put("health.timeout", properties.getHealth().getTimeout());
		durations.put("health.max-lateness", properties.getHealth().getMaxLateness());
		durations.put("dashboard.timeout", properties.getDashboard().getTimeout());
		durations.forEach(
				(property, duration) -> validateDuration(field(property), "delay-queue." + property, duration, errors));
		Duration lookahead = properties.getBroker().getLookahead();
		if (lookahead.isNegative() || lookahead.compareTo(BrokerSettings.MAX_LOOKAHEAD) > 0) {
			errors.rejectValue("broker.lookahead", "invalid", "delay-queue.broker.lookahead must be 0 to "
					+ BrokerSettings.MAX_LOOKAHEAD.toSeconds() + "s, but was " + Durations.format(lookahead));
		}
		properties.getTopics().forEach((topic, settings) -> {
			Map<String, @Nullable Duration> own = new LinkedHashMap<>();
			own.put("visibility-timeout", settings.getVisibilityTimeout());
			own.put("late-threshold", settings.getLateThreshold());
			own.put("backoff.initial-interval", settings.getBackoff().getInitialInterval());
			own.put("backoff.max-interval", settings.getBackoff().getMaxInterval());
			own.forEach((property, duration) -> validateDuration("topics[" + topic + "]." + field(property),
					topicProperty(topic, property), duration, errors));
		});
	}

	private static void validateDuration(String field, String property, @Nullable Duration duration, Errors errors) {
		if (duration != null && duration.compareTo(MAX_DURATION) > 0) {
			errors.rejectValue(field, "invalid", property + " must be at most " + MAX_DURATION.toDays()
					+ "d (about a hundred years, for as long as it takes), but was " + Durations.format(duration));
		}
	}

	/**
	 * @return the field path of a property's kebab-case name below {@code delay-queue.},
	 * e.g. {@code listener.shutdownTimeout}
	 */
	private static String field(String property) {
		StringBuilder field = new StringBuilder();
		boolean upper = false;
		for (char c : property.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				field.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return field.toString();
	}

	private static void validateTopic(String topic, Errors errors) {
		try {
			Topics.requireValidOrDeadLetters(topic);
		}
		catch (InvalidMessageException ex) {
			errors.rejectValue("topics", "invalid", "delay-queue.topics: " + ex.getMessage());
		}
	}

	private static void validateGaugedTopic(String topic, Errors errors) {
		try {
			Topics.requireValidOrDeadLetters(topic);
		}
		catch (InvalidMessageException ex) {
			errors.rejectValue("metrics.topics", "invalid", "delay-queue.metrics.topics: " + ex.getMessage());
		}
	}

	private static void validatePartitions(String topic, int partitions, Errors errors) {
		if (partitions < 1 || partitions > TopicPartitions.MAX_PARTITIONS) {
			errors.rejectValue("topics[" + topic + "].partitions", "invalid", topicProperty(topic, "partitions")
					+ " must be 1 to " + TopicPartitions.MAX_PARTITIONS + ", but was " + partitions);
		}
	}

	private static void validateReplication(DelayQueueProperties.Replication replication, Errors errors) {
		if (replication.getMinReplicas() < 0) {
			errors.rejectValue("producer.replication.minReplicas", "invalid",
					"delay-queue.producer.replication.min-replicas must be 0 (no confirmation) or more, but was "
							+ replication.getMinReplicas());
		}
		if (replication.getTimeout().compareTo(Duration.ofMillis(1)) < 0) {
			errors.rejectValue("producer.replication.timeout", "invalid",
					"delay-queue.producer.replication.timeout must be positive, but was "
							+ Durations.format(replication.getTimeout()));
		}
	}

	private static void validateBatch(String topic, DelayQueueProperties.Topic settings, Errors errors) {
		Integer maxBatchSize = settings.getMaxBatchSize();
		String problem = (maxBatchSize != null) ? maxBatchSizeProblem(maxBatchSize) : null;
		if (problem != null) {
			errors.rejectValue("topics[" + topic + "].maxBatchSize", "invalid",
					topicProperty(topic, "max-batch-size") + " " + problem);
		}
		Duration batchTimeout = settings.getBatchTimeout();
		problem = (batchTimeout != null) ? batchTimeoutProblem(batchTimeout) : null;
		if (problem != null) {
			errors.rejectValue("topics[" + topic + "].batchTimeout", "invalid",
					topicProperty(topic, "batch-timeout") + " " + problem);
		}
	}

	/**
	 * Refuses a group concurrency out of 1 to
	 * {@link ListenerSettings#MAX_GROUP_CONCURRENCY}: unlike the settings, the property
	 * has no 0, as unset means no limit.
	 */
	private static void validateGroupConcurrency(String topic, @Nullable Integer groupConcurrency, Errors errors) {
		if (groupConcurrency != null && (groupConcurrency < 1 || groupConcurrencyProblem(groupConcurrency) != null)) {
			errors.rejectValue("topics[" + topic + "].groupConcurrency", "invalid",
					topicProperty(topic, "group-concurrency") + " must be between 1 and "
							+ ListenerSettings.MAX_GROUP_CONCURRENCY + " (unset for no limit), but was "
							+ groupConcurrency);
		}
	}

	/** Refuses weights out of 1 to 100, invalid group names and too many groups. */
	private static void validateGroupWeights(String topic, Map<String, Integer> weights, Errors errors) {
		String problem = GroupWeights.problem(weights);
		if (problem != null) {
			errors.rejectValue("topics[" + topic + "].groupWeights", "invalid",
					topicProperty(topic, "group-weights") + ": " + problem);
		}
	}

	private static void validateRateLimit(String topic, DelayQueueProperties.TopicRateLimit rateLimit, int partitions,
			Errors errors) {
		validateRateLimit(topic, "rate-limit", "rateLimit", rateLimit.getLimit(), rateLimit.getPeriod(), partitions,
				errors);
	}

	/** Refuses a rate limit ({@code name}: the property, {@code path}: its field). */
	private static void validateRateLimit(String topic, String name, String path, @Nullable Integer limit,
			@Nullable Duration period, int partitions, Errors errors) {
		if ((limit == null) != (period == null)) {
			String missing = (limit == null) ? "limit" : "period";
			errors.rejectValue("topics[" + topic + "]." + path + "." + missing, "invalid",
					topicProperty(topic, name + "." + missing) + " must be set with "
							+ topicProperty(topic, name + "." + ((limit == null) ? "period" : "limit"))
							+ ": a rate limit needs both");
			return;
		}
		String problem = (limit != null) ? RateLimit.limitProblem(limit) : null;
		if (problem != null) {
			errors.rejectValue("topics[" + topic + "]." + path + ".limit", "invalid",
					topicProperty(topic, name + ".limit") + " " + problem);
		}
		else if (limit != null && partitions > 1 && RateLimit.shareProblem(limit, partitions) != null) {
			errors.rejectValue("topics[" + topic + "].rateLimit.limit", "invalid",
					topicProperty(topic, "rate-limit.limit") + " must be at least " + topicProperty(topic, "partitions")
							+ " (" + partitions + "), but was " + limit + ": each of the " + partitions
							+ " partitions of topic '" + topic + "' enforces its own share of the limit, at least 1");
		}
		problem = (period != null) ? RateLimit.periodProblem(period) : null;
		if (problem != null) {
			errors.rejectValue("topics[" + topic + "]." + path + ".period", "invalid",
					topicProperty(topic, name + ".period") + " " + problem);
		}
	}

	private static void validateKeyPrefix(String prefix, Errors errors) {
		String problem = keyPrefixProblem(prefix);
		if (problem != null) {
			errors.rejectValue("keyPrefix", "invalid", "delay-queue.key-prefix " + problem);
		}
	}

	private static @Nullable String keyPrefixProblem(String prefix) {
		if (prefix == null || prefix.isBlank()) {
			return "must not be blank";
		}
		if (prefix.length() > MAX_KEY_PREFIX_LENGTH) {
			return "must be at most " + MAX_KEY_PREFIX_LENGTH + " characters, but has " + prefix.length();
		}
		for (int i = 0; i < prefix.length(); i++) {
			char c = prefix.charAt(i);
			if (c == '{' || c == '}') {
				return "must not contain '{' or '}', but was '" + prefix + "': every key of a topic must share the "
						+ "one hash tag {<topic>}, or its scripts fail with CROSSSLOT on a Redis Cluster";
			}
			if (Character.isWhitespace(c) || Character.isSpaceChar(c) || Character.isISOControl(c)) {
				return String.format(Locale.ROOT,
						"must not contain whitespace or control characters, but has U+%04X at index %d", (int) c, i);
			}
		}
		return null;
	}

	private static void validatePrefetch(int prefetch, Errors errors) {
		if (prefetch < 0 || prefetch > MAX_CLAIM) {
			errors.rejectValue("listener.prefetch", "invalid",
					"delay-queue.listener.prefetch must be 0 to " + MAX_CLAIM + ", but was " + prefetch);
		}
	}

	private static void validateConcurrency(String field, String property, int concurrency, Errors errors) {
		if (concurrency < 1 || concurrency > MAX_CLAIM) {
			errors.rejectValue(field, "invalid",
					property + " must be 1 to " + MAX_CLAIM + ", but was " + concurrency + ((concurrency > MAX_CLAIM)
							? ": a listener claims at most that many messages in one Redis " + "script call" : ""));
		}
	}

	private static String topicProperty(String topic, String property) {
		return "delay-queue.topics" + (topic.contains(".") ? "[" + topic + "]" : "." + topic) + "." + property;
	}

}
