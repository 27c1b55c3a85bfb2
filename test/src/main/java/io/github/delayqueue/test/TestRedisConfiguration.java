package io.github.delayqueue.test;

import io.github.delayqueue.test.redis.TestRedis;

import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Points an application at the test Redis of this JVM (see {@link TestRedis}), over any
 * {@code spring.data.redis.*} property: for running the application in development
 * without a Redis to hand, from a class in the test sources, e.g.
 * {@code SpringApplication.from(MyApplication::main).with(TestRedisConfiguration.class).run(args)}
 * and {@code ./mvnw spring-boot:test-run}. The Redis stops with the JVM.
 */
@TestConfiguration(proxyBeanMethods = false)
public class TestRedisConfiguration {

	/**
	 * The connection to the test Redis, started on first use.
	 * @return the connection details Spring Boot's Redis auto-configuration uses
	 */
	@Bean
	DataRedisConnectionDetails testRedisConnectionDetails() {
		return new TestRedisConnectionDetails(TestRedis.shared());
	}

}
