package io.github.delayqueue.benchmarks;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * The Spring Boot application each delay-queue measurement runs in: auto-configuration
 * only; the listener beans are added as sources by {@link BenchmarkListeners}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class BenchmarkApplication {

}
