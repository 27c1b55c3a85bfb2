package io.github.delayqueue.store.redis;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

/**
 * Each script's keys are declared once in Java, in {@link Script}, its arguments and
 * reply once, in its {@link ScriptCodec} ({@link ScriptCodecs#signature(Script)}), and
 * all three once in its {@code .lua} header: the two must name the same keys and
 * arguments in the same order, and the same reply.
 */
class ScriptHeadersTests {

	private static final Pattern KEY_LINE = Pattern.compile("^-- KEYS\\[(\\d+)] (.*)$");

	private static final Pattern ARGUMENT_LINE = Pattern.compile("^-- ARGV(\\[.*)$");

	private static final Pattern RETURNS_LINE = Pattern.compile("^-- Returns (.*)$");

	@ParameterizedTest
	@EnumSource(Script.class)
	void headerNamesTheDeclaredKeysInTheDeclaredOrder(Script script) throws IOException {
		List<String> header = headerKeys(script);
		assertThat(header).as("KEYS lines of %s.lua", script.fileName()).hasSameSizeAs(script.keys());
		for (int i = 0; i < header.size(); i++) {
			assertThat(header.get(i)).as("KEYS[%d] of %s.lua", i + 1, script.fileName())
				.startsWith(script.keys().get(i).header() + " ");
		}
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void headerNamesTheArgumentsTheCodecDeclaresInItsOrder(Script script) throws IOException {
		ScriptCodec.Signature<?> signature = ScriptCodecs.signature(script);
		assertThat(signature.script()).as("script of the signature declared for %s", script).isEqualTo(script);
		List<String> header = lines(script, ARGUMENT_LINE);
		assertThat(header).as("ARGV lines of %s.lua", script.fileName()).hasSameSizeAs(signature.headers());
		for (int i = 0; i < header.size(); i++) {
			assertThat(header.get(i)).as("ARGV line %d of %s.lua", i + 1, script.fileName())
				.startsWith(signature.headers().get(i));
		}
	}

	@Test
	void everyCodecWritesItsArgumentsThroughItsSignatureAndEveryScriptHasOneCodec() throws Exception {
		List<Script> scripts = new ArrayList<>();
		for (Class<?> codec : ScriptCodec.class.getPermittedSubclasses()) {
			assertThat(Arrays.stream(codec.getDeclaredMethods()).map(Method::getName)).as(codec.getSimpleName())
				.doesNotContain("arguments", "script");
			Field signature = codec.getDeclaredField("SIGNATURE");
			signature.setAccessible(true);
			scripts.add(((ScriptCodec.Signature<?>) signature.get(null)).script());
		}
		assertThat(scripts).containsExactlyInAnyOrder(Script.values());
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void headerDescribesTheReplyTheCodecReads(Script script) throws IOException {
		assertThat(lines(script, RETURNS_LINE)).as("Returns line of %s.lua", script.fileName())
			.singleElement(STRING)
			.startsWith(ScriptCodecs.signature(script).returns());
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void headerSaysWhatARequestSentTwiceDoes(Script script) throws IOException {
		if (script == Script.STATS || script == Script.PAGE || script == Script.INSPECT || script == Script.SCHEDULES) {
			assertThat(text(script)).contains("Reads only");
		}
		else {
			assertThat(text(script)).as("%s.lua", script.fileName()).containsPattern("(?m)^-- Replayed: ");
		}
	}

	private static List<String> headerKeys(Script script) throws IOException {
		List<String> keys = new ArrayList<>();
		for (String line : text(script).split("\n")) {
			Matcher matcher = KEY_LINE.matcher(line);
			if (matcher.matches()) {
				assertThat(Integer.parseInt(matcher.group(1))).as("KEYS numbering").isEqualTo(keys.size() + 1);
				keys.add(matcher.group(2));
			}
		}
		return keys;
	}

	private static List<String> lines(Script script, Pattern pattern) throws IOException {
		List<String> found = new ArrayList<>();
		for (String line : text(script).split("\n")) {
			Matcher matcher = pattern.matcher(line);
			if (matcher.matches()) {
				found.add(matcher.group(1));
			}
		}
		return found;
	}

	private static String text(Script script) throws IOException {
		return new ClassPathResource(script.fileName() + ".lua", Script.class)
			.getContentAsString(StandardCharsets.UTF_8);
	}

}
