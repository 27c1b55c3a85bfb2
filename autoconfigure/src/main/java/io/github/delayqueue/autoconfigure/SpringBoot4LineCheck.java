package io.github.delayqueue.autoconfigure;

/**
 * Fails startup at once when these Spring Boot 4 artifacts run on Spring Boot 3.
 */
final class SpringBoot4LineCheck extends SpringBootLineCheck {

	SpringBoot4LineCheck() {
		super(4, 0, "delay-queue-spring-boot-starter", "delay-queue-test", "delay-queue-spring-boot-3-starter",
				"delay-queue-spring-boot-3-test");
	}

}
