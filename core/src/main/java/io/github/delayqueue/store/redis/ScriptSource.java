package io.github.delayqueue.store.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.core.io.ClassPathResource;

/**
 * Reads the Lua sources beside {@link Script} and puts a script together as Redis runs
 * it, without the clock and signal that {@link ScriptClock} puts in front:
 * {@code common.lua}, then each helper of {@code include/} that the script names on a
 * {@code -- @include <name>} line, and the helpers those name, each once and after the
 * helpers it calls, then the script itself. A script carries only the helpers it calls:
 * Lua creates each one anew on every call.
 */
final class ScriptSource {

	private static final Pattern INCLUDE = Pattern.compile("(?m)^-- @include (\\S+)$");

	private static final String COMMON = read("common");

	private ScriptSource() {
	}

	/**
	 * Puts a script together with the common prologue and the helpers it names.
	 * @param name the script's file name, without {@code .lua}
	 * @return the text to run
	 * @throws IllegalStateException if helpers name each other in a circle
	 */
	static String script(String name) {
		String body = read(name);
		StringBuilder text = new StringBuilder(COMMON);
		Set<String> added = new HashSet<>();
		for (String helper : includes(body)) {
			addHelper(helper, added, new LinkedHashSet<>(), text);
		}
		return text.append(body).toString();
	}

	/**
	 * The helpers a source names on its {@code -- @include} lines.
	 * @param source a script's or a helper's source
	 * @return the names, in the order of the lines
	 */
	static List<String> includes(String source) {
		List<String> names = new ArrayList<>();
		Matcher matcher = INCLUDE.matcher(source);
		while (matcher.find()) {
			names.add(matcher.group(1));
		}
		return names;
	}

	/**
	 * Reads a source.
	 * @param name its file name, without {@code .lua}, relative to the folder of
	 * {@link Script} (helpers: {@code include/<name>})
	 * @return its text
	 */
	static String read(String name) {
		try {
			return new ClassPathResource(name + ".lua", Script.class).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read script " + name + ".lua", ex);
		}
	}

	private static void addHelper(String helper, Set<String> added, Set<String> path, StringBuilder text) {
		if (added.contains(helper)) {
			return;
		}
		if (!path.add(helper)) {
			throw new IllegalStateException("Lua helpers include each other in a circle: " + path + " -> " + helper);
		}
		String source = read("include/" + helper);
		for (String inner : includes(source)) {
			addHelper(inner, added, path, text);
		}
		path.remove(helper);
		added.add(helper);
		text.append(source);
	}

}
