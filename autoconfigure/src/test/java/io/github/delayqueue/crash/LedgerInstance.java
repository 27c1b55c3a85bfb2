package io.github.delayqueue.crash;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One application instance of the crash tests, run as its own JVM: a listener that
 * records every delivery in a ledger in Redis, outside the queue's keys, then takes a
 * moment, so that a kill often lands while handlers are running; a listener of grouped
 * messages that records when each handling starts and ends (it works for
 * {@code crash.group-handler-ms}, 20 ms unless set); and its name in a set once the
 * application is ready.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class LedgerInstance {

	/** Hash: message id → number of deliveries recorded. */
	static final String COUNTS = "crash-ledger:counts";

	/** List of {@code id|instance|attempt|epoch ms}, one per delivery. */
	static final String LOG = "crash-ledger:log";

	/** The topic the instances consume. */
	static final String TOPIC = "crash";

	/** The topic of grouped messages the instances consume. */
	static final String GROUP_TOPIC = "crash-groups";

	/**
	 * List of {@code start|id|group|instance|attempt|epoch ms} and
	 * {@code end|id|group|instance|attempt|epoch ms}, one of each per handling of a
	 * message of {@link #GROUP_TOPIC} (no end for one the instance was killed in).
	 */
	static final String GROUP_LOG = "crash-ledger:group-log";

	/** Set of the instances whose application is ready. */
	static final String READY = "crash-ledger:ready";

	/**
	 * Starts an instance; arguments are Spring Boot properties, e.g.
	 * {@code --spring.data.redis.port=…}.
	 * @param args the arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(LedgerInstance.class, args);
	}

	@Bean
	LedgerListener ledgerListener(StringRedisTemplate redis, @Value("${crash.instance}") String instance) {
		return new LedgerListener(redis, instance);
	}

	@Bean
	GroupLedgerListener groupLedgerListener(StringRedisTemplate redis, @Value("${crash.instance}") String instance,
			@Value("${crash.group-handler-ms:20}") long handlerMillis) {
		return new GroupLedgerListener(redis, instance, handlerMillis);
	}

	@Bean
	ReadyMarker readyMarker(StringRedisTemplate redis, @Value("${crash.instance}") String instance) {
		return new ReadyMarker(redis, instance);
	}

	/**
	 * Records each delivery, then works for 0 to 4 ms.
	 */
	static class LedgerListener {

		private final StringRedisTemplate redis;

		private final String instance;

		LedgerListener(StringRedisTemplate redis, String instance) {
			this.redis = redis;
			this.instance = instance;
		}

		@DelayListener(topic = TOPIC, concurrency = "4")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.redis.opsForHash().increment(COUNTS, delivery.id(), 1);
			this.redis.opsForList()
				.rightPush(LOG, delivery.id() + "|" + this.instance + "|" + delivery.attempt() + "|"
						+ System.currentTimeMillis());
			TimeUnit.MILLISECONDS.sleep(ThreadLocalRandom.current().nextInt(5));
		}

	}

	/**
	 * Records when the handling of each grouped message starts and ends, working for the
	 * time set in between.
	 */
	static class GroupLedgerListener {

		private final StringRedisTemplate redis;

		private final String instance;

		private final long handlerMillis;

		GroupLedgerListener(StringRedisTemplate redis, String instance, long handlerMillis) {
			this.redis = redis;
			this.instance = instance;
			this.handlerMillis = handlerMillis;
		}

		@DelayListener(topic = GROUP_TOPIC, concurrency = "4")
		void on(Delivery<String> delivery) throws InterruptedException {
			record("start", delivery);
			TimeUnit.MILLISECONDS.sleep(this.handlerMillis);
			record("end", delivery);
		}

		private void record(String event, Delivery<String> delivery) {
			this.redis.opsForList()
				.rightPush(GROUP_LOG, event + "|" + delivery.id() + "|" + delivery.group() + "|" + this.instance + "|"
						+ delivery.attempt() + "|" + System.currentTimeMillis());
		}

	}

	/**
	 * Adds the instance's name to {@link #READY} once the application is ready.
	 */
	static class ReadyMarker {

		private final StringRedisTemplate redis;

		private final String instance;

		ReadyMarker(StringRedisTemplate redis, String instance) {
			this.redis = redis;
			this.instance = instance;
		}

		@EventListener(ApplicationReadyEvent.class)
		void ready() {
			this.redis.opsForSet().add(READY, this.instance);
		}

	}

}
