package io.github.delayqueue.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * An order-timeout demo of the delay queue: every new order schedules an
 * {@code order-timeout} message, paying the order cancels that message, and an order
 * still unpaid when the message arrives is cancelled. {@code TestSampleApplication}, in
 * the test sources, runs it on a Redis of its own.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleApplication {

	/**
	 * Starts the sample.
	 * @param args command-line arguments, for example {@code --sample.order-timeout=10s}
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
