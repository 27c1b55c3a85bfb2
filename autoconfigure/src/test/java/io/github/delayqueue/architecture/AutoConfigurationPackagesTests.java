package io.github.delayqueue.architecture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packages of the Spring Boot modules (both lines and the code they share) and which
 * of ours each may import: the Actuator support works through the store's port, never the
 * Redis adapter, and never imports the auto-configuration, the only place that knows the
 * adapter; the dashboard works through the Actuator endpoint's operations and reads the
 * meters by name. The engine's own rules are in the engine's
 * {@code PackageDependenciesTests}.
 */
class AutoConfigurationPackagesTests {

	private static final List<Path> SOURCES = List.of(Path.of("src/main/java/io/github/delayqueue"),
			Path.of("../spring-boot-common/src/main/java/io/github/delayqueue"),
			Path.of("../spring-boot-3/autoconfigure/src/main/java/io/github/delayqueue"));

	/** A use of one of our packages, in an import or by its full name in the code. */
	private static final Pattern OWN_REFERENCE = Pattern
		.compile("\\bio\\.github\\.delayqueue\\.((?:store\\.redis)|[a-z]+)\\.");

	private static final Set<String> ENGINE = Set.of("producer", "group", "convert", "listener", "metrics",
			"observation", "runtime", "schedule", "store", "time");

	private static final Map<String, Set<String>> ALLOWED = Map.of("actuate",
			Set.of("runtime", "schedule", "group", "store", "producer", "listener", "time"), "dashboard",
			Set.of("actuate", "metrics", "store"), "autoconfigure",
			union(ENGINE, Set.of("actuate", "dashboard", "store.redis")));

	@Test
	void eachPackageUsesOnlyThePackagesItMayDependOn() throws IOException {
		List<String> violations = new ArrayList<>();
		for (Path root : SOURCES) {
			assertThat(root).as("sources of a Spring Boot module").isDirectory();
			try (Stream<Path> files = Files.walk(root)) {
				for (Path source : files.filter((file) -> file.toString().endsWith(".java")).toList()) {
					String owner = root.relativize(source).getName(0).toString();
					assertThat(ALLOWED).as("a rule for package %s", owner).containsKey(owner);
					for (String line : codeLines(source)) {
						Matcher matcher = OWN_REFERENCE.matcher(line);
						while (matcher.find()) {
							if (!matcher.group(1).equals(owner) && !ALLOWED.get(owner).contains(matcher.group(1))) {
								violations.add(root.relativize(source) + ": " + line.trim());
							}
						}
					}
				}
			}
		}
		assertThat(violations).isEmpty();
	}

	private static Set<String> union(Set<String> first, Set<String> second) {
		Set<String> union = new HashSet<>(first);
		union.addAll(second);
		return Set.copyOf(union);
	}

	/**
	 * The lines of a source that are code: imports and statements, without the package
	 * line and comments.
	 */
	private static List<String> codeLines(Path source) throws IOException {
		return Files.readAllLines(source).stream().filter((line) -> {
			String code = line.trim();
			return !code.startsWith("package ") && !code.startsWith("*") && !code.startsWith("/*")
					&& !code.startsWith("//");
		}).toList();
	}

}
