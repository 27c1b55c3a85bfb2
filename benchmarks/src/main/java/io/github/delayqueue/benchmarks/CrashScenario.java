package io.github.delayqueue.benchmarks;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A consumer process dies inside its handler (the JVM halts, as on {@code kill -9});
 * another consumer then waits for the message to be delivered again.
 */
final class CrashScenario {

	static final String VICTIM = "crash-victim";

	private static final String TOPIC = "crash";

	private CrashScenario() {
	}

	static Map<String, Object> run(Run run) throws Exception {
		Map<String, String> properties = crashProperties(run);
		try (QueueClient producer = run.open(ConsumerSpec.none(), properties)) {
			producer.send(TOPIC, Payloads.of(0, System.currentTimeMillis()), System.currentTimeMillis());
		}
		Process victim = startVictim(run);
		boolean exited = victim.waitFor(2, TimeUnit.MINUTES);
		if (!exited) {
			victim.destroyForcibly();
		}
		long died = System.currentTimeMillis();
		Duration wait = run.options().duration("wait", Duration.ofSeconds(60));
		CountDownLatch redelivered = new CountDownLatch(1);
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("victim_exit_code", exited ? victim.exitValue() : "did not exit");
		try (QueueClient survivor = run.open(ConsumerSpec.of(TOPIC, 1, (payload) -> redelivered.countDown()),
				properties)) {
			boolean again = redelivered.await(wait.toMillis(), TimeUnit.MILLISECONDS);
			result.put("delivered_again", again);
			result.put("seconds_until_delivered_again", again ? (System.currentTimeMillis() - died) / 1000.0 : null);
			result.put("waited_s", wait.toSeconds());
		}
		return result;
	}

	/**
	 * Runs in the victim process: consume the topic and halt the JVM inside the handler.
	 */
	static void victim(Run run) throws InterruptedException {
		try (QueueClient client = run.open(ConsumerSpec.of(TOPIC, 1, (payload) -> Runtime.getRuntime().halt(137)),
				crashProperties(run))) {
			Thread.sleep(Duration.ofMinutes(1).toMillis());
		}
		System.exit(2);
	}

	private static Map<String, String> crashProperties(Run run) {
		Map<String, String> properties = new LinkedHashMap<>(run.listenerProperties());
		properties.put("delay-queue.listener.visibility-timeout", run.options().string("visibility-timeout", "5s"));
		return properties;
	}

	private static Process startVictim(Run run) throws Exception {
		String java = ProcessHandle.current().info().command().orElse("java");
		String classPath = System.getProperty("java.class.path");
		List<String> command = new ArrayList<>(List.of(java));
		if (classPath.endsWith(".jar") && !classPath.contains(File.pathSeparator)) {
			command.addAll(List.of("-jar", classPath));
		}
		else {
			command.addAll(List.of("-cp", classPath, BenchmarkMain.class.getName()));
		}
		command.addAll(List.of("--scenario=" + VICTIM, "--queue=" + run.kind().label(), "--redis-url=" + run.redisUrl(),
				"--visibility-timeout=" + run.options().string("visibility-timeout", "5s"),
				"--prefetch=" + run.options().string("prefetch", Run.DEFAULT)));
		return new ProcessBuilder(command).inheritIO().start();
	}

}
