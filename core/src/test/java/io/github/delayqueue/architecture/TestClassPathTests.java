package io.github.delayqueue.architecture;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The engine's tests run without Spring Boot, as the engine does: nothing of Spring Boot
 * is on {@code core}'s test class path, so that a test here cannot start an application
 * context and the auto-configuration's tests stay where the auto-configuration is.
 */
class TestClassPathTests {

	@Test
	void springBootIsNotOnTheTestClassPath() {
		assertThatExceptionOfType(ClassNotFoundException.class)
			.isThrownBy(() -> Class.forName("org.springframework.boot.SpringApplication"));
		assertThatExceptionOfType(ClassNotFoundException.class)
			.isThrownBy(() -> Class.forName("org.springframework.boot.autoconfigure.AutoConfiguration"));
	}

}
