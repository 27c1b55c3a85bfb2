package io.github.delayqueue.store;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each script's keys are declared once in Java, in {@link Script}, and once in its
 * {@code .lua} header: the two must name the same keys in the same order.
 */
class ScriptHeadersTests {

	private static final Pattern KEY_LINE = Pattern.compile("^-- KEYS\\[(\\d+)] (.*)$");

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
	void headerSaysWhatARequestSentTwiceDoes(Script script) throws IOException {
		if (script == Script.STATS || script == Script.PAGE || script == Script.INSPECT) {
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

	private static String text(Script script) throws IOException {
		return new ClassPathResource(script.fileName() + ".lua", Script.class)
			.getContentAsString(StandardCharsets.UTF_8);
	}

}
