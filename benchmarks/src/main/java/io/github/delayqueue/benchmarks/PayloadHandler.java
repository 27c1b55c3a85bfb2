package io.github.delayqueue.benchmarks;

/**
 * What a measurement does with each payload its consumers receive; called from consumer
 * threads.
 */
@FunctionalInterface
interface PayloadHandler {

	void handle(String payload);

}
