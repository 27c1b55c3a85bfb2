package io.github.delayqueue.benchmarks;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The Spring Boot application each delay-queue measurement runs in. */
@SpringBootApplication(scanBasePackages = "io.github.delayqueue.benchmarks.none")
class BenchmarkApplication {

}
