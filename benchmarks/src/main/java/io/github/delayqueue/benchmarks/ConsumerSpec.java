package io.github.delayqueue.benchmarks;

import java.util.List;

/**
 * What a client consumes: the topics, how many threads per topic, and what each received
 * payload is given to.
 *
 * @param topics the topics with a consumer, possibly none
 * @param threads the consumer threads per topic
 * @param handler called with every received payload, from the consumer threads
 */
record ConsumerSpec(List<String> topics, int threads, PayloadHandler handler) {

	static ConsumerSpec none() {
		return new ConsumerSpec(List.of(), 0, (payload) -> {
		});
	}

	static ConsumerSpec of(String topic, int threads, PayloadHandler handler) {
		return new ConsumerSpec(List.of(topic), threads, handler);
	}

}
