package io.github.delayqueue.sample;

import io.github.delayqueue.test.TestRedisConfiguration;

import org.springframework.boot.SpringApplication;

/**
 * Runs the sample in development on a Redis of its own, started on a free port and
 * stopped with the JVM: {@code ./mvnw -pl sample-app -am spring-boot:test-run}.
 */
public final class TestSampleApplication {

	private TestSampleApplication() {
	}

	/**
	 * Starts the sample on the test Redis.
	 * @param args command-line arguments, for example {@code --sample.order-timeout=10s}
	 */
	public static void main(String[] args) {
		SpringApplication.from(SampleApplication::main).with(TestRedisConfiguration.class).run(args);
	}

}
