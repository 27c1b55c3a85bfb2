package io.github.delayqueue.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.diagnostics.FailureAnalysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The Spring Boot 4 artifacts on Spring Boot 3 fail startup at once, naming the starter
 * to use.
 */
class SpringBootLineCheckTests {

	private final SpringBootLineCheck check = new SpringBoot4LineCheck();

	@Test
	void passesOnThisSpringBoot() {
		assertThat(SpringBootVersion.getVersion()).startsWith("4.");
		assertThatNoException().isThrownBy(() -> this.check.check(SpringBootVersion.getVersion()));
	}

	@Test
	void runsWithEveryApplication() {
		assertThat(new SpringApplication(Object.class).getListeners())
			.hasAtLeastOneElementOfType(SpringBoot4LineCheck.class);
	}

	@Test
	void onSpringBoot3FailsNamingTheSpringBoot3StarterAndTestKit() {
		assertThatExceptionOfType(WrongSpringBootLineException.class).isThrownBy(() -> this.check.check("3.5.7"))
			.satisfies((wrong) -> {
				FailureAnalysis analysis = new WrongSpringBootLineFailureAnalyzer().analyze(wrong);
				assertThat(analysis.getDescription()).contains("Spring Boot 3.5.7")
					.contains("delay-queue-spring-boot-starter")
					.contains("Spring Boot 4.x")
					.contains("the test kit io.github.delayqueue:delay-queue-test brings them");
				assertThat(analysis.getAction()).contains("io.github.delayqueue:delay-queue-spring-boot-3-starter")
					.contains("io.github.delayqueue:delay-queue-spring-boot-3-test");
			});
	}

}
