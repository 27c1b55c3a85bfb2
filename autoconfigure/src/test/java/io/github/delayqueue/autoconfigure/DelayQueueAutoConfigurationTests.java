package io.github.delayqueue.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Type;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.listener.DelayListenerAnnotationBeanPostProcessor;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.listener.ListenerSettingsProvider;
import io.github.delayqueue.time.RetryBackoff;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * {@link DelayQueueAutoConfiguration}: which beans it contributes and when, how user
 * beans replace them, how properties are bound, and the generated configuration metadata.
 */
class DelayQueueAutoConfigurationTests {

	private static final Class<?>[] QUEUE_BEAN_TYPES = { DelayQueueTemplate.class, RedisMessageStore.class,
			PayloadConverter.class, DelayListenerEndpointRegistry.class, DelayQueueRuntime.class,
			ListenerSettingsProvider.class, DelayListenerAnnotationBeanPostProcessor.class,
			DelayQueueProperties.class };

	private final String prefix = QueueContexts.uniquePrefix();

	private final ApplicationContextRunner runner = QueueContexts.runner(this.prefix);

	@Test
	void withRedisEveryQueueBeanIsContributed() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			for (Class<?> type : QUEUE_BEAN_TYPES) {
				assertThat(context).hasSingleBean(type);
			}
			assertThat(context).getBean(PayloadConverter.class).isInstanceOf(JsonPayloadConverter.class);
			assertThat(context.getBean(RedisMessageStore.class).prefix()).isEqualTo(this.prefix);
			assertThat(context.getBean(DelayListenerEndpointRegistry.class).getEndpoints()).isEmpty();
		});
	}

	@Test
	void contributedBeansWorkTogetherAgainstRedis() {
		this.runner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			SendResult sent = template.send("orders", "hello", Duration.ZERO);
			assertThat(Transitions.promote(store, "orders", 10).moved()).isEqualTo(1);
			List<ClaimedMessage> claimed = Transitions.claim(store, "orders", 10, Duration.ofMinutes(1));
			assertThat(claimed).singleElement().satisfies((message) -> {
				assertThat(message.id()).isEqualTo(sent.id());
				assertThat(MessageFormat.decode(message.id(), message.stored()).payload())
					.isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
			});
			// The topic's keys, and the marker of the queue's data beside them.
			assertThat(context.getBean(StringRedisTemplate.class).keys(this.prefix + ":*"))
				.allSatisfy((key) -> assertThat(key).satisfiesAnyOf(
						(topicKey) -> assertThat(topicKey).startsWith(this.prefix + ":{orders}:"),
						(marker) -> assertThat(marker).isEqualTo(this.prefix + ":dataset")));
		});
	}

	@Test
	void keyPrefixDefaultsToDq() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class))
			.withPropertyValues(TestRedis.shared().springProperties())
			.run((context) -> {
				assertThat(context.getBean(RedisMessageStore.class).prefix()).isEqualTo("dq");
				assertThat(context.getBean(RedisMessageStore.class).signalChannel()).isEqualTo("dq:signal");
			});
	}

	@Test
	void propertiesHaveTheDocumentedDefaults() {
		this.runner.run((context) -> {
			DelayQueueProperties properties = context.getBean(DelayQueueProperties.class);
			assertThat(properties.isEnabled()).isTrue();
			assertThat(properties.getMaxPayloadSize()).isEqualTo(DataSize.ofMegabytes(1));
			assertThat(properties.getBroker().getBatchSize()).isEqualTo(1000);
			assertThat(properties.getBroker().getMaxSleep()).isEqualTo(Duration.ofSeconds(5));
			assertThat(properties.getListener().getConcurrency()).isEqualTo(1);
			assertThat(properties.getListener().getMaxAttempts()).isEqualTo(5);
			assertThat(properties.getListener().getVisibilityTimeout()).isEqualTo(Duration.ofSeconds(30));
			assertThat(properties.getListener().getIdleCheckInterval()).isEqualTo(Duration.ofSeconds(5));
			assertThat(properties.getListener().getShutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
			assertThat(properties.getListener().getBackoff().getMultiplier()).isEqualTo(2.0);
			assertThat(properties.getTopics()).isEmpty();
		});
	}

	@Test
	void userPayloadConverterReplacesTheDefaultAndIsUsedByTheTemplate() {
		this.runner.withUserConfiguration(UpperCaseConverterConfig.class).run((context) -> {
			assertThat(context).hasSingleBean(PayloadConverter.class);
			assertThat(context).getBean(PayloadConverter.class).isInstanceOf(UpperCaseConverter.class);
			context.getBean(DelayQueueTemplate.class).send("orders", "hello", Duration.ZERO);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			Transitions.promote(store, "orders", 10);
			assertThat(Transitions.claim(store, "orders", 10, Duration.ofMinutes(1))).singleElement()
				.satisfies((message) -> assertThat(MessageFormat.decode(message.id(), message.stored()).payload())
					.isEqualTo("HELLO".getBytes(StandardCharsets.UTF_8)));
		});
	}

	@Test
	void userTemplateReplacesTheDefault() {
		this.runner.withUserConfiguration(OwnTemplateConfig.class).run((context) -> {
			assertThat(context).hasSingleBean(DelayQueueTemplate.class);
			assertThat(context).getBean(DelayQueueTemplate.class).isSameAs(context.getBean("ownTemplate"));
			assertThat(context).doesNotHaveBean("delayQueueTemplate");
		});
	}

	@Test
	void userStoreReplacesTheDefaultAndIsUsedByTheTemplate() {
		String ownPrefix = QueueContexts.uniquePrefix();
		this.runner.withUserConfiguration(OwnStoreConfig.class)
			.withPropertyValues("own-store.prefix=" + ownPrefix)
			.run((context) -> {
				assertThat(context).hasSingleBean(RedisMessageStore.class);
				assertThat(context.getBean(RedisMessageStore.class).prefix()).isEqualTo(ownPrefix);
				context.getBean(DelayQueueTemplate.class).send("orders", "x", Duration.ofMinutes(1));
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				assertThat(redis.keys(ownPrefix + ":*")).isNotEmpty();
				assertThat(redis.keys(this.prefix + ":*")).isEmpty();
			});
	}

	@Test
	void userStoreDeclaredAsTheMessageStorePortReplacesTheDefault() {
		String ownPrefix = QueueContexts.uniquePrefix();
		this.runner.withUserConfiguration(OwnPortStoreConfig.class)
			.withPropertyValues("own-store.prefix=" + ownPrefix)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(MessageStore.class);
				assertThat(context).doesNotHaveBean("delayQueueMessageStore");
				context.getBean(DelayQueueTemplate.class).send("orders", "x", Duration.ofMinutes(1));
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				assertThat(redis.keys(ownPrefix + ":*")).isNotEmpty();
				assertThat(redis.keys(this.prefix + ":*")).isEmpty();
			});
	}

	@Test
	void userListenerSettingsProviderReplacesTheDefault() {
		ListenerSettingsProvider own = (topic) -> new ListenerSettings(9, 9, 9, Duration.ofSeconds(9),
				new RetryBackoff(Duration.ofSeconds(1), 1.0, Duration.ofSeconds(1)), Duration.ofSeconds(9),
				Duration.ofSeconds(9), Duration.ofMinutes(9), LatePolicy.DELIVER, Duration.ofHours(9));
		this.runner.withBean(ListenerSettingsProvider.class, () -> own).run((context) -> {
			assertThat(context).hasSingleBean(ListenerSettingsProvider.class);
			assertThat(context).getBean(ListenerSettingsProvider.class).isSameAs(own);
		});
	}

	@Test
	void userEndpointRegistryReplacesTheDefault() {
		this.runner.withUserConfiguration(OwnRegistryConfig.class).run((context) -> {
			assertThat(context).hasSingleBean(DelayListenerEndpointRegistry.class);
			assertThat(context).getBean(DelayListenerEndpointRegistry.class).isSameAs(context.getBean("ownRegistry"));
		});
	}

	@Test
	void userAnnotationBeanPostProcessorReplacesTheDefault() {
		this.runner.withUserConfiguration(OwnPostProcessorConfig.class).run((context) -> {
			assertThat(context).hasSingleBean(DelayListenerAnnotationBeanPostProcessor.class);
			assertThat(context).hasBean("ownPostProcessor");
		});
	}

	@Test
	void disabledQueueContributesNoBeans() {
		this.runner.withPropertyValues("delay-queue.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RedisConnectionFactory.class);
			for (Class<?> type : QUEUE_BEAN_TYPES) {
				assertThat(context).doesNotHaveBean(type);
			}
		});
	}

	@Test
	void explicitlyEnabledQueueContributesItsBeans() {
		this.runner.withPropertyValues("delay-queue.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(DelayQueueTemplate.class));
	}

	@Test
	void withoutARedisConnectionFactoryNoBeansAreContributed() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DelayQueueAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(RedisConnectionFactory.class);
				for (Class<?> type : QUEUE_BEAN_TYPES) {
					assertThat(context).doesNotHaveBean(type);
				}
			});
	}

	@Test
	void withoutJacksonAutoConfigurationTheDefaultConverterStillWritesJson() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DataRedisAutoConfiguration.class, DelayQueueAutoConfiguration.class))
			.withPropertyValues(TestRedis.shared().springProperties())
			.withPropertyValues("delay-queue.key-prefix=" + this.prefix)
			.run((context) -> {
				assertThat(context).hasSingleBean(PayloadConverter.class);
				byte[] json = context.getBean(PayloadConverter.class).toBytes(Map.of("a", 1));
				assertThat(new String(json, StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
			});
	}

	@Test
	void topicPropertiesOverrideTheListenerDefaults() {
		this.runner.withPropertyValues("delay-queue.listener.concurrency=2", "delay-queue.listener.max-attempts=4",
				"delay-queue.listener.visibility-timeout=20s", "delay-queue.listener.idle-check-interval=3s",
				"delay-queue.listener.shutdown-timeout=15s", "delay-queue.listener.backoff.initial-interval=100ms",
				"delay-queue.listener.backoff.multiplier=1.5", "delay-queue.listener.backoff.max-interval=5s",
				"delay-queue.topics.orders.concurrency=3", "delay-queue.topics.orders.max-attempts=7",
				"delay-queue.topics.orders.visibility-timeout=45s",
				"delay-queue.topics.orders.backoff-initial-interval=2s",
				"delay-queue.topics.orders.backoff-multiplier=3", "delay-queue.topics.orders.backoff-max-interval=1m")
			.run((context) -> {
				ListenerSettings settings = context.getBean(ListenerSettingsProvider.class).forTopic("orders");
				assertThat(settings.concurrency()).isEqualTo(3);
				assertThat(settings.maxAttempts()).isEqualTo(7);
				assertThat(settings.visibilityTimeout()).isEqualTo(Duration.ofSeconds(45));
				assertThat(settings.backoff())
					.isEqualTo(new RetryBackoff(Duration.ofSeconds(2), 3.0, Duration.ofMinutes(1)));
				assertThat(settings.idleCheckInterval()).isEqualTo(Duration.ofSeconds(3));
				assertThat(settings.shutdownTimeout()).isEqualTo(Duration.ofSeconds(15));
			});
	}

	@Test
	void topicBackoffIsNestedLikeTheListenersAndTheOldFlatNamesStillWork() {
		this.runner
			.withPropertyValues("delay-queue.listener.backoff.multiplier=1.5",
					"delay-queue.topics.orders.backoff.initial-interval=2s",
					"delay-queue.topics.orders.backoff.max-interval=1m",
					"delay-queue.topics.payments.backoff-initial-interval=3s",
					"delay-queue.topics.payments.backoff-max-interval=5s")
			.run((context) -> {
				ListenerSettingsProvider settings = context.getBean(ListenerSettingsProvider.class);
				assertThat(settings.forTopic("orders").backoff())
					.isEqualTo(new RetryBackoff(Duration.ofSeconds(2), 1.5, Duration.ofMinutes(1)));
				assertThat(settings.forTopic("payments").backoff().initialInterval()).isEqualTo(Duration.ofSeconds(3));
			});
	}

	@Test
	void topicWithoutPropertiesGetsTheListenerDefaults() {
		this.runner.withPropertyValues("delay-queue.listener.concurrency=2", "delay-queue.listener.max-attempts=4",
				"delay-queue.listener.visibility-timeout=20s", "delay-queue.listener.backoff.initial-interval=100ms",
				"delay-queue.listener.backoff.multiplier=1.5", "delay-queue.listener.backoff.max-interval=5s",
				"delay-queue.topics.orders.max-attempts=7")
			.run((context) -> {
				ListenerSettings settings = context.getBean(ListenerSettingsProvider.class).forTopic("payments");
				assertThat(settings.concurrency()).isEqualTo(2);
				assertThat(settings.maxAttempts()).isEqualTo(4);
				assertThat(settings.visibilityTimeout()).isEqualTo(Duration.ofSeconds(20));
				assertThat(settings.backoff())
					.isEqualTo(new RetryBackoff(Duration.ofMillis(100), 1.5, Duration.ofSeconds(5)));
			});
	}

	@Test
	void topicWithSomePropertiesGetsTheListenerDefaultsForTheOthers() {
		this.runner
			.withPropertyValues("delay-queue.listener.concurrency=2", "delay-queue.listener.visibility-timeout=20s",
					"delay-queue.listener.backoff.initial-interval=100ms",
					"delay-queue.listener.backoff.max-interval=5s", "delay-queue.topics.orders.max-attempts=7",
					"delay-queue.topics.orders.backoff-multiplier=4")
			.run((context) -> {
				ListenerSettings settings = context.getBean(ListenerSettingsProvider.class).forTopic("orders");
				assertThat(settings.maxAttempts()).isEqualTo(7);
				assertThat(settings.concurrency()).isEqualTo(2);
				assertThat(settings.visibilityTimeout()).isEqualTo(Duration.ofSeconds(20));
				assertThat(settings.backoff())
					.isEqualTo(new RetryBackoff(Duration.ofMillis(100), 4.0, Duration.ofSeconds(5)));
			});
	}

	@Test
	void withoutAnyPropertiesATopicGetsTheBuiltInDefaults() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class))
			.withPropertyValues(TestRedis.shared().springProperties())
			.withPropertyValues("delay-queue.key-prefix=" + this.prefix)
			.run((context) -> {
				ListenerSettings settings = context.getBean(ListenerSettingsProvider.class).forTopic("orders");
				assertThat(settings).isEqualTo(new ListenerSettings(1, 256, 5, Duration.ofSeconds(30),
						new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(10)), Duration.ofSeconds(5),
						Duration.ofSeconds(30), Duration.ofMinutes(10), LatePolicy.DELIVER, Duration.ofHours(1)));
			});
	}

	@Test
	void topicWhoseNameContainsDotsIsConfiguredWithBrackets() {
		this.runner.withPropertyValues("delay-queue.topics[order.created].max-attempts=8").run((context) -> {
			assertThat(context.getBean(ListenerSettingsProvider.class).forTopic("order.created").maxAttempts())
				.isEqualTo(8);
		});
	}

	@Test
	void maxPayloadSizeIsBoundFromADataSize() {
		this.runner.withPropertyValues("delay-queue.max-payload-size=2KB").run((context) -> {
			assertThat(context.getBean(DelayQueueProperties.class).getMaxPayloadSize())
				.isEqualTo(DataSize.ofKilobytes(2));
		});
	}

	@ParameterizedTest
	@ValueSource(ints = { 0, 1001, -1 })
	void brokerBatchSizeOutOfRangeFailsStartupNamingTheProperty(int batchSize) {
		this.runner.withPropertyValues("delay-queue.broker.batch-size=" + batchSize).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.broker.batch-size")
				.hasMessageContaining(String.valueOf(batchSize));
		});
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 1000 })
	void brokerBatchSizeAtTheEndsOfItsRangeIsAccepted(int batchSize) {
		this.runner.withPropertyValues("delay-queue.broker.batch-size=" + batchSize).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DelayQueueProperties.class).getBroker().getBatchSize()).isEqualTo(batchSize);
		});
	}

	/**
	 * Before, a duration such as {@code 300000d} (a valid {@code Duration}, about 820
	 * years) was accepted, and every stop and pause then threw
	 * {@code ArithmeticException} converting it to nanoseconds.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "delay-queue.listener.shutdown-timeout", "delay-queue.listener.visibility-timeout",
			"delay-queue.listener.max-handling-time", "delay-queue.listener.idle-check-interval",
			"delay-queue.broker.max-sleep", "delay-queue.producer.send-timeout", "delay-queue.health.timeout",
			"delay-queue.topics.orders.visibility-timeout" })
	void aDurationLongerThanAHundredYearsFailsStartupNamingTheProperty(String property) {
		this.runner.withPropertyValues(property + "=300000d").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining(property + " must be at most 36500d")
				.hasMessageContaining("300000d");
		});
	}

	@Test
	void aDurationOfAHundredYearsIsAccepted() {
		this.runner.withPropertyValues("delay-queue.listener.shutdown-timeout=36500d").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DelayQueueProperties.class).getListener().getShutdownTimeout())
				.isEqualTo(Duration.ofDays(36_500));
		});
	}

	@Test
	void aNegativeShutdownTimeoutFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("delay-queue.listener.shutdown-timeout=-1s").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.listener.shutdown-timeout must not be negative");
		});
	}

	@Test
	void brokerMaxSleepOfZeroFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("delay-queue.broker.max-sleep=0s").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure().rootCause().hasMessageContaining("delay-queue.broker.max-sleep");
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "dq{x}", "{dq", "dq}" })
	void keyPrefixWithABraceFailsStartupNamingThePropertyAndTheHashTag(String prefix) {
		this.runner.withPropertyValues("delay-queue.key-prefix=" + prefix).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.key-prefix must not contain '{' or '}'")
				.hasMessageContaining("CROSSSLOT");
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "  " })
	void blankKeyPrefixFailsStartupNamingTheProperty(String prefix) {
		this.runner.withPropertyValues("delay-queue.key-prefix=" + prefix).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.key-prefix must not be blank");
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "d q", "d\tq", "d\u0007q", "d\u2003q" })
	void keyPrefixWithWhitespaceOrAControlCharacterFailsStartupNamingThePropertyAndTheIndex(String prefix) {
		this.runner.withPropertyValues("delay-queue.key-prefix=" + prefix).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.key-prefix must not contain whitespace or control characters")
				.hasMessageContaining("at index");
		});
	}

	@Test
	void keyPrefixOverAHundredCharactersFailsStartupNamingThePropertyAndTheLength() {
		this.runner.withPropertyValues("delay-queue.key-prefix=" + "p".repeat(101)).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.key-prefix must be at most 100 characters, but has 101");
		});
	}

	@Test
	void keyPrefixOfAHundredCharactersWithPunctuationIsAccepted() {
		String prefix = "app:dq-v2_" + "p".repeat(90);
		this.runner.withPropertyValues("delay-queue.key-prefix=" + prefix).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RedisMessageStore.class).prefix()).isEqualTo(prefix);
		});
	}

	@Test
	void aConcurrencyOrPrefetchOverAThousandFailsStartupNamingThePropertyAndValue() {
		this.runner
			.withPropertyValues("delay-queue.listener.concurrency=1001", "delay-queue.listener.prefetch=1001",
					"delay-queue.topics.orders.concurrency=995", "delay-queue.topics[order.created].concurrency=5000")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.listener.concurrency must be 1 to 1000, but was 1001")
					.hasMessageContaining("delay-queue.listener.prefetch must be 0 to 1000, but was 1001")
					.hasMessageContaining(
							"delay-queue.topics[order.created].concurrency must be 1 to 1000, but was 5000")
					.hasMessageNotContaining("delay-queue.topics.orders.concurrency");
			});
	}

	@Test
	void aConcurrencyAndPrefetchOfAThousandEachAreAccepted() {
		this.runner
			.withPropertyValues("delay-queue.listener.concurrency=1000", "delay-queue.listener.prefetch=1000",
					"delay-queue.topics.orders.concurrency=1000")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aTopicsGroupConcurrencyReachesItsListenerSettingsAndATopicWithoutOneHasNoLimit() {
		this.runner
			.withPropertyValues("delay-queue.topics.webhooks.group-concurrency=4",
					"delay-queue.topics[order.created].group-concurrency=1")
			.run((context) -> {
				ListenerSettingsProvider settings = context.getBean(ListenerSettingsProvider.class);
				assertThat(settings.forTopic("webhooks").groupConcurrency()).isEqualTo(4);
				assertThat(settings.forTopic("order.created").groupConcurrency()).isEqualTo(1);
				assertThat(settings.forTopic("orders").groupConcurrency()).isZero();
			});
	}

	@ParameterizedTest
	@ValueSource(ints = { 0, -1, 1001 })
	void aGroupConcurrencyOutOfOneToAThousandFailsStartupNamingThePropertyAndValue(int groupConcurrency) {
		this.runner.withPropertyValues("delay-queue.topics.webhooks.group-concurrency=" + groupConcurrency)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.topics.webhooks.group-concurrency must be between 1 and 1000"
							+ " (unset for no limit), but was " + groupConcurrency);
			});
	}

	@Test
	void aGroupConcurrencyOfOneAndOfAThousandAreAccepted() {
		this.runner
			.withPropertyValues("delay-queue.topics.webhooks.group-concurrency=1",
					"delay-queue.topics.orders.group-concurrency=1000")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ListenerSettingsProvider.class).forTopic("orders").groupConcurrency())
					.isEqualTo(1000);
			});
	}

	@Test
	void aTopicsStrictGroupOrderReachesItsListenerSettingsAndTheOrderIsRelaxedUnlessSet() {
		this.runner
			.withPropertyValues("delay-queue.topics.orders.group-order=strict",
					"delay-queue.topics.webhooks.group-order=RELAXED")
			.run((context) -> {
				ListenerSettingsProvider settings = context.getBean(ListenerSettingsProvider.class);
				assertThat(settings.forTopic("orders").strictGroupOrder()).isTrue();
				assertThat(settings.forTopic("webhooks").strictGroupOrder()).isFalse();
				assertThat(settings.forTopic("clicks").strictGroupOrder()).isFalse();
			});
	}

	@Test
	void aTopicsGroupWeightsReachItsListenerSettingsWithNamesInBrackets() {
		this.runner
			.withPropertyValues("delay-queue.topics.webhooks.group-weights.gold=3",
					"delay-queue.topics.webhooks.group-weights.[shop.17]=100",
					"delay-queue.topics.webhooks.group-weights.plain=1")
			.run((context) -> {
				ListenerSettingsProvider settings = context.getBean(ListenerSettingsProvider.class);
				assertThat(settings.forTopic("webhooks").groupWeights().asMap()).containsOnly(entry("gold", 3),
						entry("shop.17", 100));
				assertThat(settings.forTopic("orders").groupWeights().isEmpty()).isTrue();
			});
	}

	@Test
	void aTopicsGroupRateLimitReachesItsListenerSettings() {
		this.runner
			.withPropertyValues("delay-queue.topics.webhooks.group-rate-limit.limit=5",
					"delay-queue.topics.webhooks.group-rate-limit.period=1s")
			.run((context) -> {
				ListenerSettingsProvider settings = context.getBean(ListenerSettingsProvider.class);
				assertThat(settings.forTopic("webhooks").groupRateLimit())
					.isEqualTo(new RateLimit(5, Duration.ofSeconds(1)));
				assertThat(settings.forTopic("orders").groupRateLimit()).isNull();
			});
	}

	@Test
	void aGroupRateLimitWithoutItsPeriodOrOutOfRangeFailsStartupNamingTheProperty() {
		this.runner
			.withPropertyValues("delay-queue.topics.webhooks.group-rate-limit.limit=5",
					"delay-queue.topics.orders.group-rate-limit.limit=0",
					"delay-queue.topics.orders.group-rate-limit.period=1s")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.topics.webhooks.group-rate-limit.period must be set with"
							+ " delay-queue.topics.webhooks.group-rate-limit.limit")
					.hasMessageContaining("delay-queue.topics.orders.group-rate-limit.limit must be between 1 and");
			});
	}

	@Test
	void aGroupWeightOutOfRangeFailsStartupNamingThePropertyAndGroup() {
		this.runner.withPropertyValues("delay-queue.topics.webhooks.group-weights.gold=0").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.topics.webhooks.group-weights: The weight of group 'gold' must be"
						+ " between 1 and 100, but was 0");
		});
	}

	@Test
	void anUnknownGroupOrderFailsStartupNamingThePropertyAndValue() {
		this.runner.withPropertyValues("delay-queue.topics.orders.group-order=sorted")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("delay-queue.topics.orders.group-order")
				.hasStackTraceContaining("sorted"));
	}

	@Test
	void aPartitionCountOutOfRangeFailsStartupNamingTheProperty() {
		this.runner
			.withPropertyValues("delay-queue.topics.orders.partitions=0", "delay-queue.topics.clicks.partitions=129")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.topics.orders.partitions must be 1 to 128, but was 0")
					.hasMessageContaining("delay-queue.topics.clicks.partitions must be 1 to 128, but was 129");
			});
	}

	@Test
	void anInvalidTopicToPublishTheGaugesOfFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("delay-queue.metrics.topics=orders,bad{topic}").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.metrics.topics: Topic 'bad{topic}' must not contain");
		});
	}

	@Test
	void retriesAndLeaseTimesTheListenersWouldRefuseFailStartupNamingTheProperties() {
		this.runner
			.withPropertyValues("delay-queue.listener.max-attempts=0", "delay-queue.listener.backoff.multiplier=0.5",
					"delay-queue.listener.visibility-timeout=0s", "delay-queue.topics.orders.max-attempts=-1",
					"delay-queue.topics.orders.backoff.initial-interval=10s",
					"delay-queue.topics.orders.backoff.max-interval=1s")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.listener.max-attempts must be at least 1, but was 0")
					.hasMessageContaining("delay-queue.listener.backoff.multiplier must be at least 1")
					.hasMessageContaining("delay-queue.listener.visibility-timeout must be at least 1ms")
					.hasMessageContaining("delay-queue.topics.orders.max-attempts must be at least 1, but was -1")
					.hasMessageContaining("delay-queue.topics.orders.backoff.max-interval must not be less than the"
							+ " initial interval 10s");
			});
	}

	@Test
	void concurrencyBelowOneAndNegativePrefetchFailStartupNamingTheProperties() {
		this.runner.withPropertyValues("delay-queue.listener.concurrency=0", "delay-queue.topics.orders.concurrency=-2")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.listener.concurrency must be 1 to 1000, but was 0")
					.hasMessageContaining("delay-queue.topics.orders.concurrency must be 1 to 1000, but was -2");
			});
		this.runner.withPropertyValues("delay-queue.listener.prefetch=-1").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.listener.prefetch must be 0 to 1000, but was -1");
		});
	}

	@Test
	void configurationMetadataDescribesEveryDelayQueueProperty() throws IOException {
		JsonMapper mapper = JsonMapper.builder().build();
		Map<String, JsonNode> properties = new LinkedHashMap<>();
		List<URL> resources = Collections
			.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"));
		for (URL resource : resources) {
			try (InputStream in = resource.openStream()) {
				for (JsonNode property : mapper.readTree(in).path("properties")) {
					String name = property.path("name").asString();
					if (name.startsWith("delay-queue.")) {
						properties.put(name, property);
					}
				}
			}
		}
		assertThat(properties).containsKeys("delay-queue.enabled", "delay-queue.key-prefix",
				"delay-queue.max-payload-size", "delay-queue.topics", "delay-queue.broker.batch-size",
				"delay-queue.broker.max-sleep", "delay-queue.listener.concurrency", "delay-queue.listener.max-attempts",
				"delay-queue.listener.visibility-timeout", "delay-queue.listener.idle-check-interval",
				"delay-queue.listener.shutdown-timeout", "delay-queue.listener.backoff.initial-interval",
				"delay-queue.listener.backoff.multiplier", "delay-queue.listener.backoff.max-interval");
		List<String> undocumented = new ArrayList<>();
		properties.forEach((name, property) -> {
			if (property.path("description").asString("").isBlank()) {
				undocumented.add(name);
			}
		});
		assertThat(undocumented).as("delay-queue properties without a description").isEmpty();
	}

	/**
	 * Upper-cases String payloads, to tell it from the default converter by the bytes it
	 * writes.
	 */
	static class UpperCaseConverter implements PayloadConverter {

		@Override
		public byte[] toBytes(Object payload) {
			return payload.toString().toUpperCase().getBytes(StandardCharsets.UTF_8);
		}

		@Override
		public Object fromBytes(byte[] bytes, Type targetType) {
			return new String(bytes, StandardCharsets.UTF_8);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UpperCaseConverterConfig {

		@Bean
		UpperCaseConverter upperCaseConverter() {
			return new UpperCaseConverter();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnTemplateConfig {

		@Bean
		DelayQueueTemplate ownTemplate(RedisMessageStore store, PayloadConverter converter) {
			return new DelayQueueTemplate(store, converter, DataSize.ofKilobytes(1));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnStoreConfig {

		@Bean
		RedisMessageStore ownStore(RedisConnectionFactory connectionFactory, Environment environment) {
			return new RedisMessageStore(connectionFactory, environment.getRequiredProperty("own-store.prefix"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnPortStoreConfig {

		@Bean
		MessageStore ownStore(RedisConnectionFactory connectionFactory, Environment environment) {
			return new RedisMessageStore(connectionFactory, environment.getRequiredProperty("own-store.prefix"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnRegistryConfig {

		@Bean
		DelayListenerEndpointRegistry ownRegistry(PayloadConverter converter) {
			return new DelayListenerEndpointRegistry(converter);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnPostProcessorConfig {

		@Bean
		static DelayListenerAnnotationBeanPostProcessor ownPostProcessor() {
			return new DelayListenerAnnotationBeanPostProcessor();
		}

	}

}
