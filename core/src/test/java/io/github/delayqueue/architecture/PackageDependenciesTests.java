package io.github.delayqueue.architecture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packages of the engine and whom each may import, so that dependencies run one way:
 * the store port imports nothing of ours but {@code time}, its Redis adapter
 * ({@code store.redis}) only the port, the runtime is built on the port and the listener
 * API, nothing of the engine imports the adapter (only the auto-configuration and the
 * test kit do) or talks to Redis but the adapter, and nothing imports Spring Boot. Reads
 * the main sources' import lines; a new package must be added here.
 */
class PackageDependenciesTests {

	private static final Path SOURCES = Path.of("src/main/java/io/github/delayqueue");

	/** A use of one of our packages, in an import or by its full name in the code. */
	private static final Pattern OWN_REFERENCE = Pattern
		.compile("\\bio\\.github\\.delayqueue\\.((?:store\\.redis)|[a-z]+)\\.");

	private static final Pattern REDIS_CLIENT_REFERENCE = Pattern
		.compile("\\b(?:org\\.springframework\\.data\\.redis|io\\.lettuce)\\.");

	private static final Pattern BOOT_REFERENCE = Pattern.compile("\\borg\\.springframework\\.boot\\.");

	/**
	 * For each top-level package, the packages of ours it may import (besides itself).
	 */
	private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(Map.entry("time", Set.of()),
			Map.entry("store", Set.of("time")), Map.entry("store.redis", Set.of("store", "time")),
			Map.entry("convert", Set.of()), Map.entry("observation", Set.of()), Map.entry("metrics", Set.of("store")),
			Map.entry("producer", Set.of("store", "convert", "metrics", "observation", "time")),
			Map.entry("listener", Set.of("producer", "convert", "store", "time")),
			Map.entry("runtime", Set.of("store", "listener", "convert", "metrics", "observation", "time")),
			Map.entry("schedule", Set.of("producer", "store", "time")),
			Map.entry("group", Set.of("producer", "store")));

	@Test
	void eachPackageUsesOnlyThePackagesItMayDependOn() throws IOException {
		List<String> violations = new ArrayList<>();
		for (Path source : sources()) {
			String owner = packageOf(source);
			assertThat(ALLOWED).as("a rule for package %s", owner).containsKey(owner);
			for (String line : codeLines(source)) {
				Matcher matcher = OWN_REFERENCE.matcher(line);
				while (matcher.find()) {
					if (!matcher.group(1).equals(owner) && !ALLOWED.get(owner).contains(matcher.group(1))) {
						violations.add(SOURCES.relativize(source) + ": " + line.trim());
					}
				}
			}
		}
		assertThat(violations).isEmpty();
	}

	@Test
	void onlyTheRedisAdapterTalksToRedis() throws IOException {
		List<String> violations = new ArrayList<>();
		for (Path source : sources()) {
			String owner = packageOf(source);
			// Which partition names land on which Cluster slots is part of the
			// partitions' definition.
			if (owner.equals("store.redis") || source.endsWith("store/TopicPartitions.java")) {
				continue;
			}
			for (String line : codeLines(source)) {
				if (REDIS_CLIENT_REFERENCE.matcher(line).find()) {
					violations.add(SOURCES.relativize(source) + ": " + line.trim());
				}
			}
		}
		assertThat(violations).isEmpty();
	}

	@Test
	void theEngineImportsNoSpringBoot() throws IOException {
		List<String> violations = new ArrayList<>();
		for (Path source : sources()) {
			for (String line : codeLines(source)) {
				if (BOOT_REFERENCE.matcher(line).find()) {
					violations.add(SOURCES.relativize(source) + ": " + line.trim());
				}
			}
		}
		assertThat(violations).isEmpty();
	}

	@Test
	void springBootIsNotOnTheEnginesClassPath() {
		assertThat(getClass().getClassLoader().getResource("org/springframework/boot/SpringApplication.class"))
			.isNull();
	}

	private static List<Path> sources() throws IOException {
		try (Stream<Path> files = Files.walk(SOURCES)) {
			return files.filter((file) -> file.toString().endsWith(".java")).toList();
		}
	}

	private static String packageOf(Path source) {
		Path relative = SOURCES.relativize(source);
		String top = relative.getName(0).toString();
		return (top.equals("store") && relative.getNameCount() > 2 && relative.getName(1).toString().equals("redis"))
				? "store.redis" : top;
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
