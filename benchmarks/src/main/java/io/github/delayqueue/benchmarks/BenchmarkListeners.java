package io.github.delayqueue.benchmarks;

import java.util.List;
import java.util.Map;

import io.github.delayqueue.listener.DelayListener;

/**
 * The listeners of a delay-queue measurement, each handing its payloads to the run's
 * handler: {@code @DelayListener} methods for one topic or ten, each named by a
 * {@code benchmark.topic-<n>} property, and {@link RegisteredListeners} for any other
 * number.
 */
final class BenchmarkListeners {

	private BenchmarkListeners() {
	}

	/**
	 * Adds the listener class for the topics to the application's sources, with the
	 * properties that name the topics.
	 * @param topics the topics to consume, possibly none
	 * @param sources the application's sources
	 * @param properties the application's properties
	 */
	static void add(List<String> topics, List<Class<?>> sources, Map<String, Object> properties) {
		switch (topics.size()) {
			case 0 -> {
				return;
			}
			case 1 -> sources.add(OneTopic.class);
			case 10 -> sources.add(TenTopics.class);
			default -> {
				sources.add(RegisteredListeners.class);
				properties.put(RegisteredListeners.TOPICS_PROPERTY, String.join(",", topics));
				return;
			}
		}
		for (int i = 0; i < topics.size(); i++) {
			properties.put("benchmark.topic-" + i, topics.get(i));
		}
	}

	static class OneTopic {

		private final PayloadHandler handler;

		OneTopic(PayloadHandler benchmarkHandler) {
			this.handler = benchmarkHandler;
		}

		@DelayListener(topic = "${benchmark.topic-0}")
		void on(String payload) {
			this.handler.handle(payload);
		}

	}

	static class TenTopics {

		private final PayloadHandler handler;

		TenTopics(PayloadHandler benchmarkHandler) {
			this.handler = benchmarkHandler;
		}

		@DelayListener(topic = "${benchmark.topic-0}")
		void on0(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-1}")
		void on1(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-2}")
		void on2(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-3}")
		void on3(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-4}")
		void on4(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-5}")
		void on5(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-6}")
		void on6(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-7}")
		void on7(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-8}")
		void on8(String payload) {
			this.handler.handle(payload);
		}

		@DelayListener(topic = "${benchmark.topic-9}")
		void on9(String payload) {
			this.handler.handle(payload);
		}

	}

}
