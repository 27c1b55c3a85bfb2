package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sends one message to each topic, all due at the same instant, and measures how late
 * each is handled: the handler's clock minus the due time written in the payload (Redis
 * runs on this machine, so its clock is the same).
 */
final class SameInstantPhase {

	private static final Duration GIVE_UP_AFTER = Duration.ofSeconds(30);

	private SameInstantPhase() {
	}

	/**
	 * Runs the phase.
	 * @param client the queue, with a listener on each topic
	 * @param handler the listeners' handler
	 * @param topics the topics
	 * @param dueIn how long after the first send the messages are due
	 * @return the figures: lateness across the topics
	 */
	static Map<String, Object> run(QueueClient client, SwitchableHandler handler, List<String> topics, Duration dueIn)
			throws InterruptedException {
		Deliveries deliveries = new Deliveries(topics.size());
		handler.set(deliveries);
		long due = System.currentTimeMillis() + dueIn.toMillis();
		for (int i = 0; i < topics.size(); i++) {
			client.send(topics.get(i), Payloads.of(i, due), due);
		}
		long sent = System.currentTimeMillis();
		long deadline = due + GIVE_UP_AFTER.toMillis();
		while (!deliveries.complete() && System.currentTimeMillis() < deadline) {
			Thread.sleep(10);
		}
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("messages", topics.size());
		result.put("sent_before_due_ms", due - sent);
		result.put("delivered", deliveries.distinct());
		result.put("lost", deliveries.lost());
		result.put("early", deliveries.early());
		result.put("p50_ms", deliveries.latenessMillis(50));
		result.put("p99_ms", deliveries.latenessMillis(99));
		result.put("max_ms", deliveries.latenessMillis(100));
		return result;
	}

}
