package io.github.delayqueue.store.redis;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

/**
 * Each script is declared once in Java, in its {@link ScriptCodec}'s signature (its
 * {@link Script}: keys and reply type; its arguments and what its reply means;
 * {@link ScriptCodecs#signatures()}), and once in its {@code .lua} header: the two must
 * name the same keys and arguments in the same order, and the same reply.
 */
class ScriptHeadersTests {

	private static final Pattern KEY_LINE = Pattern.compile("^-- KEYS\\[(\\d+)] (.*)$");

	private static final Pattern ARGUMENT_LINE = Pattern.compile("^-- ARGV(\\[.*)$");

	private static final Pattern RETURNS_LINE = Pattern.compile("^-- Returns (.*)$");

	/** The files beside the scripts that are not scripts: the prelude's parts. */
	private static final Set<String> NOT_SCRIPTS = Set.of("common", "server_clock", "offset_clock", "publish_signal",
			"spublish_signal");

	static List<Script> scripts() {
		return ScriptCodecs.signatures().stream().map(ScriptCodec.Signature::script).toList();
	}

	static List<ScriptCodec.Signature<?>> signatures() {
		return ScriptCodecs.signatures();
	}

	@ParameterizedTest
	@MethodSource("scripts")
	void headerNamesTheDeclaredKeysInTheDeclaredOrder(Script script) throws IOException {
		List<String> header = headerKeys(script);
		assertThat(header).as("KEYS lines of %s.lua", script.fileName()).hasSameSizeAs(script.keys());
		for (int i = 0; i < header.size(); i++) {
			assertThat(header.get(i)).as("KEYS[%d] of %s.lua", i + 1, script.fileName())
				.startsWith(script.keys().get(i).header() + " ");
		}
	}

	@ParameterizedTest
	@MethodSource("signatures")
	void headerNamesTheArgumentsTheCodecDeclaresInItsOrder(ScriptCodec.Signature<?> signature) throws IOException {
		Script script = signature.script();
		List<String> header = lines(script, ARGUMENT_LINE);
		assertThat(header).as("ARGV lines of %s.lua", script.fileName()).hasSameSizeAs(signature.headers());
		for (int i = 0; i < header.size(); i++) {
			assertThat(header.get(i)).as("ARGV line %d of %s.lua", i + 1, script.fileName())
				.startsWith(signature.headers().get(i));
		}
	}

	@Test
	void everyCodecWritesItsArgumentsThroughItsSignatureAndEveryScriptFileHasOneCodec() throws Exception {
		List<String> declared = new ArrayList<>();
		for (Class<?> codec : ScriptCodecs.class.getDeclaredClasses()) {
			if (!ScriptCodec.class.isAssignableFrom(codec)) {
				continue;
			}
			assertThat(Arrays.stream(codec.getDeclaredMethods()).map(Method::getName)).as(codec.getSimpleName())
				.doesNotContain("arguments", "script");
			Field signature = codec.getDeclaredField("SIGNATURE");
			signature.setAccessible(true);
			declared.add(((ScriptCodec.Signature<?>) signature.get(null)).script().fileName());
		}
		File directory = new ClassPathResource("send.lua", Script.class).getFile().getParentFile();
		List<String> files = Arrays.stream(directory.list((dir, name) -> name.endsWith(".lua")))
			.map((name) -> name.substring(0, name.length() - ".lua".length()))
			.filter((name) -> !NOT_SCRIPTS.contains(name))
			.toList();
		assertThat(declared).as("scripts declared by a codec").containsExactlyInAnyOrderElementsOf(files);
	}

	@ParameterizedTest
	@MethodSource("signatures")
	void headerDescribesTheReplyTheCodecReads(ScriptCodec.Signature<?> signature) throws IOException {
		assertThat(lines(signature.script(), RETURNS_LINE)).as("Returns line of %s.lua", signature.script())
			.singleElement(STRING)
			.startsWith(signature.returns());
	}

	@ParameterizedTest
	@MethodSource("scripts")
	void headerSaysWhatARequestSentTwiceDoes(Script script) throws IOException {
		if (Set.of("stats", "page", "inspect", "schedules", "group").contains(script.fileName())) {
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
