package io.github.delayqueue.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's property table lists every {@code delay-queue.*} property with the default
 * from the generated configuration metadata.
 */
class ReadmePropertiesTests {

	@Test
	void readmeListsEveryPropertyWithItsDefault() throws IOException {
		List<String> readme = Files.readAllLines(readme(), StandardCharsets.UTF_8);
		JsonNode metadata;
		try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			metadata = JsonMapper.builder().build().readTree(in);
		}
		for (JsonNode property : metadata.get("properties")) {
			String name = property.get("name").asString();
			if (!name.startsWith("delay-queue.")) {
				continue;
			}
			if (name.equals("delay-queue.topics")) {
				assertThat(String.join("\n", readme)).contains("`delay-queue.topics.<topic>.*`");
				continue;
			}
			Optional<String> row = readme.stream().filter((line) -> line.startsWith("| `" + name + "` |")).findFirst();
			assertThat(row).as("README row for %s", name).isPresent();
			JsonNode defaultValue = property.get("defaultValue");
			if (defaultValue != null && !defaultValue.isArray()) {
				String text = defaultValue.isBoolean() ? defaultValue.asString().toLowerCase(Locale.ROOT)
						: defaultValue.asString();
				String expected = "`" + text + "`";
				assertThat(row.get().split("\\|")[2].trim()).as("README default of %s", name).isEqualTo(expected);
			}
		}
	}

	private static Path readme() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			Path readme = dir.resolve("README.md");
			if (Files.exists(readme) && Files.exists(dir.resolve("autoconfigure"))) {
				return readme;
			}
		}
		throw new IllegalStateException("README.md not found above " + Path.of("").toAbsolutePath());
	}

}
