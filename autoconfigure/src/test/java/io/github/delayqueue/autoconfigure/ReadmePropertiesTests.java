package io.github.delayqueue.autoconfigure;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The property table of {@code docs/configuration.md} (the reference the README links to)
 * lists every {@code delay-queue.*} property with the default from the generated
 * configuration metadata.
 */
class ReadmePropertiesTests {

	@Test
	void theConfigurationReferenceListsEveryPropertyWithItsDefault() throws IOException {
		List<String> reference = Files.readAllLines(reference(), StandardCharsets.UTF_8);
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
				assertThat(String.join("\n", reference)).contains("`delay-queue.topics.<topic>.*`");
				continue;
			}
			if (name.equals("delay-queue.schedules")) {
				assertThat(String.join("\n", reference)).contains("`delay-queue.schedules.<name>.topic`");
				continue;
			}
			Optional<String> row = reference.stream()
				.filter((line) -> line.startsWith("| `" + name + "` |"))
				.findFirst();
			assertThat(row).as("docs/configuration.md row for %s", name).isPresent();
			JsonNode defaultValue = property.get("defaultValue");
			if (defaultValue != null && !defaultValue.isArray()) {
				String text = defaultValue.isBoolean() ? defaultValue.asString().toLowerCase(Locale.ROOT)
						: defaultValue.asString();
				String expected = "`" + text + "`";
				assertThat(row.get().split("\\|")[2].trim()).as("docs/configuration.md default of %s", name)
					.isEqualTo(expected);
			}
		}
	}

	@Test
	void theConfigurationReferenceListsEveryPropertyOfATopic() throws IOException {
		String reference = Files.readString(reference(), StandardCharsets.UTF_8);
		List<String> properties = new ArrayList<>();
		collect(DelayQueueProperties.Topic.class, "delay-queue.topics.<topic>.", properties);
		assertThat(properties).isNotEmpty()
			.allSatisfy((property) -> assertThat(reference).as("docs/configuration.md row for %s", property)
				.contains("| `" + property + "` |"));
	}

	/** The properties a class binds, nested classes of the same package followed. */
	private static void collect(Class<?> type, String prefix, List<String> properties) {
		for (Field field : type.getDeclaredFields()) {
			if (Modifier.isStatic(field.getModifiers())) {
				continue;
			}
			String name = prefix + field.getName().replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
			if (field.getType().getName().startsWith(DelayQueueProperties.class.getName() + "$")
					&& !field.getType().isEnum()) {
				collect(field.getType(), name + ".", properties);
			}
			else {
				properties.add(name);
			}
		}
	}

	private static Path reference() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			Path reference = dir.resolve("docs/configuration.md");
			if (Files.exists(reference) && Files.exists(dir.resolve("autoconfigure"))) {
				return reference;
			}
		}
		throw new IllegalStateException("docs/configuration.md not found above " + Path.of("").toAbsolutePath());
	}

}
