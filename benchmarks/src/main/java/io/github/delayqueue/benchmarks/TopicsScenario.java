package io.github.delayqueue.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Many idle topics in one application, each with a listener of concurrency 1 and the
 * default settings: the JVM threads they run (next to the same application without
 * listeners), the Redis commands they cost while nothing is due, how late their messages
 * are handled when one per topic falls due at the same instant (next to a single topic;
 * the first such instant, and the third, once the code is compiled and each topic's
 * handler thread and meters exist), and how long the application takes to stop
 * gracefully. Three applications run one after the other: without topics, with one, with
 * all.
 */
final class TopicsScenario {

	private TopicsScenario() {
	}

	static Map<String, Object> run(Run run) throws Exception {
		int topicCount = run.options().integer("topics", 200);
		Duration idle = run.options().duration("idle", Duration.ofSeconds(20));
		// How long each application runs before its threads are counted, Redis is watched
		// or messages are sent.
		Duration settle = run.options().duration("settle", Duration.ofSeconds(5));
		// How far ahead the messages due at the same instant are sent.
		Duration dueIn = run.options().duration("due-in", Duration.ofSeconds(3));
		if (run.kind() == QueueClient.Kind.REDISSON) {
			return Map.of("supported", false, "why", "RDelayedQueue has no listener containers or brokers per topic");
		}
		Map<String, Object> threads = new LinkedHashMap<>();
		Map<String, Object> stopMillis = new LinkedHashMap<>();
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("topics", topicCount);
		int noTopicThreads;
		try (QueueClient client = open(run, List.of(), new SwitchableHandler())) {
			noTopicThreads = threadsAfterSettling(settle);
			threads.put("no_topics", noTopicThreads);
			stopMillis.put("no_topics", stopMillis(client));
		}
		SwitchableHandler handler = new SwitchableHandler();
		List<String> oneTopic = topics(1);
		try (QueueClient client = open(run, oneTopic, handler)) {
			Thread.sleep(settle.toMillis());
			result.put("lateness_one_topic", SameInstantPhase.run(client, handler, oneTopic, dueIn));
			stopMillis.put("one_topic", stopMillis(client));
		}
		List<String> topics = topics(topicCount);
		try (QueueClient client = open(run, topics, handler)) {
			int withTopics = threadsAfterSettling(settle);
			threads.put("with_topics", withTopics);
			threads.put("difference", withTopics - noTopicThreads);
			threads.put("per_topic", (double) (withTopics - noTopicThreads) / topicCount);
			result.put("idle", IdlePhase.run(run, topicCount, idle));
			result.put("lateness", SameInstantPhase.run(client, handler, topics, dueIn));
			// Again, with the code paths compiled and each topic's handler thread and
			// meters made.
			SameInstantPhase.run(client, handler, topics, dueIn);
			result.put("lateness_warm", SameInstantPhase.run(client, handler, topics, dueIn));
			threads.put("with_topics_after_delivery", threadCount());
			stopMillis.put("with_topics", stopMillis(client));
		}
		result.put("threads", threads);
		result.put("stop_ms", stopMillis);
		return result;
	}

	/**
	 * Starts the application with a listener on each topic, concurrency 1 and every other
	 * setting at its default.
	 */
	private static QueueClient open(Run run, List<String> topics, SwitchableHandler handler) {
		return run.open(new ConsumerSpec(topics, 1, handler), Map.of());
	}

	private static List<String> topics(int count) {
		List<String> topics = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			topics.add("topic-" + i);
		}
		return topics;
	}

	private static int threadsAfterSettling(Duration settle) throws InterruptedException {
		Thread.sleep(settle.toMillis());
		return threadCount();
	}

	/**
	 * @return the live threads of this JVM, the benchmark's own included
	 */
	private static int threadCount() {
		return ManagementFactory.getThreadMXBean().getThreadCount();
	}

	/**
	 * Stops the application gracefully and times it; closing it again afterwards does
	 * nothing.
	 * @return milliseconds
	 */
	private static long stopMillis(QueueClient client) {
		long start = System.nanoTime();
		client.close();
		return (System.nanoTime() - start) / 1_000_000;
	}

}
