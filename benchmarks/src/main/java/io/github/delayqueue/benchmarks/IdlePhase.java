package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Watches Redis while listeners wait with nothing due: the commands run in a window, per
 * second and per topic, from {@code INFO commandstats} before and after (the side
 * client's own {@code INFO} left out).
 */
final class IdlePhase {

	private IdlePhase() {
	}

	/**
	 * Runs the phase.
	 * @param run the run
	 * @param topics how many topics have listeners
	 * @param duration how long to watch
	 * @return the figures
	 */
	static Map<String, Object> run(Run run, int topics, Duration duration) throws InterruptedException {
		Map<String, Long> before = run.server().callsByCommand();
		Thread.sleep(duration.toMillis());
		Map<String, Long> after = run.server().callsByCommand();
		double seconds = duration.toMillis() / 1000.0;
		Map<String, Object> byCommand = new LinkedHashMap<>();
		long total = 0;
		for (Map.Entry<String, Long> entry : after.entrySet()) {
			long delta = entry.getValue() - before.getOrDefault(entry.getKey(), 0L);
			if (delta > 0 && !entry.getKey().equals("info")) {
				byCommand.put(entry.getKey(), delta / seconds / topics);
				total += delta;
			}
		}
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("topics", topics);
		result.put("seconds", duration.toSeconds());
		result.put("commands_per_s_per_topic", total / seconds / topics);
		result.put("by_command", byCommand);
		return result;
	}

}
