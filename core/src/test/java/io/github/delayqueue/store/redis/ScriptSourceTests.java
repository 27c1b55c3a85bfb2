package io.github.delayqueue.store.redis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The helpers of {@code include/} are one local function each, and every script and
 * helper names on its {@code -- @include} lines exactly the helpers its code calls: none
 * missing (Lua would call a nil global), none unused (Lua would build it on every call
 * for nothing).
 */
class ScriptSourceTests {

	private static final Pattern LOCAL_FUNCTION = Pattern.compile("(?m)^local function (\\w+)\\(");

	@Test
	void everyHelperDefinesOneLocalFunctionNamedAfterItsFile() throws IOException {
		for (String helper : helpers()) {
			String source = ScriptSource.read("include/" + helper);
			assertThat(definedFunctions(source)).as("functions of include/%s.lua", helper).containsExactly(helper);
			assertThat(source).as("include/%s.lua", helper).startsWith("-- " + helper + ": ");
		}
	}

	@Test
	void everyHelperNamesTheHelpersItCalls() throws IOException {
		for (String helper : helpers()) {
			String source = ScriptSource.read("include/" + helper);
			assertThat(new TreeSet<>(ScriptSource.includes(source))).as("@include lines of include/%s.lua", helper)
				.isEqualTo(calledHelpers(source));
		}
	}

	static List<Script> scripts() {
		return ScriptCodecs.signatures().stream().map(ScriptCodec.Signature::script).toList();
	}

	@ParameterizedTest
	@MethodSource("scripts")
	void everyScriptNamesTheHelpersItCalls(Script script) throws IOException {
		String source = ScriptSource.read(script.fileName());
		assertThat(new TreeSet<>(ScriptSource.includes(source))).as("@include lines of %s.lua", script.fileName())
			.isEqualTo(calledHelpers(source));
	}

	@Test
	void everyHelperIsCalledBySomeScript() throws IOException {
		Set<String> used = new TreeSet<>();
		for (Script script : scripts()) {
			used.addAll(definedFunctions(ScriptSource.script(script.fileName())));
		}
		assertThat(used).containsAll(helpers());
	}

	@Test
	void aScriptGetsEachHelperOnceAfterTheHelpersItCalls() {
		String text = ScriptSource.script("expire_leases");
		List<String> defined = definedFunctions(text);
		assertThat(defined).doesNotHaveDuplicates()
			.containsSubsequence("buried_name", "bury")
			.containsSubsequence("expect", "check_bury");
		assertThat(text).startsWith(ScriptSource.read("common")).endsWith(ScriptSource.read("expire_leases"));
	}

	private static List<String> definedFunctions(String source) {
		List<String> names = new ArrayList<>();
		Matcher matcher = LOCAL_FUNCTION.matcher(source);
		while (matcher.find()) {
			names.add(matcher.group(1));
		}
		return names;
	}

	/** The helpers called in a source's code (its comments left out). */
	private static Set<String> calledHelpers(String source) throws IOException {
		String code = source.lines()
			.filter((line) -> !line.stripLeading().startsWith("--"))
			.collect(Collectors.joining("\n"));
		Set<String> called = new TreeSet<>();
		for (String helper : helpers()) {
			if (Pattern.compile("(?<![\\w])" + helper + "\\(").matcher(code).find()
					&& !definedFunctions(code).contains(helper)) {
				called.add(helper);
			}
		}
		return called;
	}

	private static Set<String> helpers() throws IOException {
		Path folder = new ClassPathResource("include", Script.class).getFile().toPath();
		try (Stream<Path> files = Files.list(folder)) {
			return files.map((file) -> file.getFileName().toString())
				.filter((name) -> name.endsWith(".lua"))
				.map((name) -> name.substring(0, name.length() - ".lua".length()))
				.collect(Collectors.toCollection(TreeSet::new));
		}
	}

}
