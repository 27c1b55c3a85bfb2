package io.github.delayqueue.crash;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One application instance of the crash tests, run as its own JVM: a listener that
 * records every delivery in a ledger in Redis, outside the queue's keys, then takes a
 * moment, so that a kill often lands while handlers are running.
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

}
