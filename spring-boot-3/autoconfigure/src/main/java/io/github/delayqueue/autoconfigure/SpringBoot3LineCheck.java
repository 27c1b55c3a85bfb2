package io.github.delayqueue.autoconfigure;

/**
 * Fails startup at once when these Spring Boot 3 artifacts run on Spring Boot 4.
 */
final class SpringBoot3LineCheck extends SpringBootLineCheck {

	SpringBoot3LineCheck() {
		super(3, 5, "delay-queue-spring-boot-3-starter", "delay-queue-spring-boot-3-test",
				"delay-queue-spring-boot-starter", "delay-queue-test");
	}

}
