package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The command line of a benchmark run: {@code --name=value} pairs. Unknown names are
 * rejected when the run ends, so a typo never silently measures the defaults.
 */
final class Options {

	private final Map<String, String> values = new LinkedHashMap<>();

	private final Map<String, String> read = new LinkedHashMap<>();

	Options(String[] args) {
		for (String arg : args) {
			if (!arg.startsWith("--") || !arg.contains("=")) {
				throw new IllegalArgumentException("Expected --name=value, got '" + arg + "'");
			}
			int equals = arg.indexOf('=');
			this.values.put(arg.substring(2, equals), arg.substring(equals + 1));
		}
	}

	String string(String name, String defaultValue) {
		String value = this.values.getOrDefault(name, defaultValue);
		this.read.put(name, value);
		return value;
	}

	String required(String name) {
		String value = this.values.get(name);
		if (value == null) {
			throw new IllegalArgumentException("Missing option --" + name + "=...");
		}
		this.read.put(name, value);
		return value;
	}

	int integer(String name, int defaultValue) {
		return Integer.parseInt(string(name, Integer.toString(defaultValue)));
	}

	Duration duration(String name, Duration defaultValue) {
		String value = string(name, defaultValue.toMillis() + "ms");
		if (value.endsWith("ms")) {
			return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
		}
		if (value.endsWith("s")) {
			return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
		}
		throw new IllegalArgumentException("--" + name + " takes a duration such as 500ms or 20s, got '" + value + "'");
	}

	/**
	 * @return the options the run used, defaults included, for the report
	 */
	Map<String, String> used() {
		return this.read;
	}

	void rejectUnused() {
		for (String name : this.values.keySet()) {
			if (!this.read.containsKey(name)) {
				throw new IllegalArgumentException("Unknown option --" + name + " for this scenario");
			}
		}
	}

}
