package io.github.delayqueue.test;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;

import io.github.delayqueue.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.store.redis.RedisMessageStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static io.github.delayqueue.test.DelayQueueAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link EmbeddedDelayQueueInitializer} in {@code ApplicationContextRunner} tests: each
 * context its own key prefix on the test Redis, whatever the application configures; a
 * clock that fails with what is pending when listeners do not finish in time.
 */
class EmbeddedDelayQueueInitializerTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.cluster.nodes=production-1.invalid:7000,production-2.invalid:7000",
				"delay-queue.key-prefix=production");

	@Test
	void eachContextGetsItsOwnKeysOnTheTestRedisWhateverTheApplicationConfigures() {
		this.runner.withInitializer(new EmbeddedDelayQueueInitializer()).run((first) -> {
			this.runner.withInitializer(new EmbeddedDelayQueueInitializer()).run((second) -> {
				RedisMessageStore firstStore = first.getBean(RedisMessageStore.class);
				assertThat(firstStore.prefix()).startsWith("test-")
					.isNotEqualTo(second.getBean(RedisMessageStore.class).prefix());
				first.getBean(DelayQueueTemplate.class).send("jobs", "payload", Duration.ofMinutes(1));
				assertThat(first.getBean(DelayQueueTestClock.class)).topic("jobs").hasScheduledCount(1);
				assertThat(second.getBean(DelayQueueTestClock.class)).topic("jobs").isEmpty();
			});
		});
	}

	@Test
	void theClockMovesTimeWithoutListenersAndClearDeletesEveryMessage() {
		this.runner.withInitializer(new EmbeddedDelayQueueInitializer()).run((context) -> {
			DelayQueueTestClock clock = context.getBean(DelayQueueTestClock.class);
			String id = context.getBean(DelayQueueTemplate.class).send("jobs", "payload", Duration.ofMinutes(1)).id();
			Instant before = clock.now();
			clock.advance(Duration.ofHours(2));
			assertThat(clock.now()).isAfterOrEqualTo(before.plus(Duration.ofHours(2)));
			assertThat(clock).topic("jobs").hasScheduled(id);
			clock.clear();
			assertThat(clock).topic("jobs").isEmpty();
		});
	}

	@Test
	void advanceFailsAfterItsTimeoutNamingWhatIsPending() {
		this.runner.withInitializer(new EmbeddedDelayQueueInitializer(Duration.ofMillis(300)))
			.withUserConfiguration(BlockingListener.class)
			.run((context) -> {
				DelayQueueTestClock clock = context.getBean(DelayQueueTestClock.class);
				context.getBean(DelayQueueTemplate.class).send("slow", "payload", Duration.ofMinutes(1));
				try {
					assertThatExceptionOfType(AssertionError.class)
						.isThrownBy(() -> clock.advance(Duration.ofMinutes(5)))
						.withMessageContaining("did not settle within 300ms")
						.withMessageContaining("listeners still hold messages");
				}
				finally {
					context.getBean(BlockingListener.class).release.countDown();
				}
				clock.awaitIdle();
				assertThat(clock).topic("slow").isEmpty();
			});
	}

	@Test
	void aTimeoutMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new EmbeddedDelayQueueInitializer(Duration.ZERO))
			.withMessageContaining("must be positive");
	}

	@Configuration(proxyBeanMethods = false)
	static class BlockingListener {

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "slow")
		void onSlow(String payload) throws InterruptedException {
			this.release.await();
		}

	}

}
