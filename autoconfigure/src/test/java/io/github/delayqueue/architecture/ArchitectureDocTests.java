package io.github.delayqueue.architecture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/architecture.md} stays true to the code: every class its package tree names
 * lives in that package, every class it names by package ({@code store.redis.Script})
 * exists there, every class it names at all exists somewhere in the project, and every
 * package of ours is in the tree and has a row in the table of who may import whom.
 */
class ArchitectureDocTests {

	private static final Path ROOT = projectRoot();

	/** A class name as the document writes it: two humps at least, or an annotation. */
	private static final Pattern CLASS_NAME = Pattern.compile("@?\\b([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)\\b");

	/** A class named with its package below {@code io.github.delayqueue}. */
	private static final Pattern QUALIFIED_NAME = Pattern
		.compile("`((?:[a-z]+\\.)+)([A-Z][A-Za-z0-9]+)(?:[.#][A-Za-z0-9]+)*(?:\\(\\))?`");

	/** A backticked class name, alone. */
	private static final Pattern NAMED_CLASS = Pattern.compile("`@?([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)`");

	/**
	 * Names of others' classes (Spring, Micrometer, Lettuce, BullMQ) that the document
	 * uses.
	 */
	private static final Set<String> OTHERS = Set.of("MeterBinder", "ClientResourcesBuilderCustomizer",
			"DataRedisAutoConfiguration", "RedisAutoConfiguration", "DataRedisConnectionDetails",
			"RedisConnectionDetails", "JsonMapper", "ObjectMapper", "RedisConnectionFactory",
			"LettuceConnectionFactory", "StringRedisTemplate", "RedisTemplate", "ApplicationContextRunner", "BackOff",
			"CommonErrorHandler", "OperationResponseBody", "SmartLifecycle", "TaskScheduler", "ThreadPoolTaskScheduler",
			"WebClient", "RestClient", "JavaScript", "GitHub", "BullMQ", "JSpecify", "NullMarked", "SpringBootTest",
			"DelayQueue", "RDelayedQueue", "SyncTaskExecutor", "TestRedis", "TestRedisCluster", "TestRedisSentinel",
			"RedisServerProcess");

	private static Map<String, Set<String>> classesByPackage;

	private static Set<String> allClasses;

	private static String document;

	@BeforeAll
	static void readTheCodeAndTheDocument() throws IOException {
		classesByPackage = new HashMap<>();
		allClasses = new HashSet<>();
		try (Stream<Path> files = Files.walk(ROOT)) {
			files.filter((file) -> file.toString().endsWith(".java"))
				.filter((file) -> file.toString().contains("/src/main/java/io/github/delayqueue/")
						|| file.toString().contains("/src/test/java/io/github/delayqueue/"))
				.filter((file) -> !file.toString().contains("/target/"))
				.forEach((file) -> {
					String path = file.toString();
					String relative = path
						.substring(path.indexOf("/io/github/delayqueue/") + "/io/github/delayqueue/".length());
					int slash = relative.lastIndexOf('/');
					String pkg = (slash < 0) ? "" : relative.substring(0, slash).replace('/', '.');
					String name = relative.substring(slash + 1, relative.length() - ".java".length());
					allClasses.addAll(declaredTypes(file, name));
					if (path.contains("/src/main/java/")) {
						classesByPackage.computeIfAbsent(pkg, (p) -> new HashSet<>()).addAll(declaredTypes(file, name));
					}
				});
		}
		document = Files.readString(ROOT.resolve("docs/architecture.md"));
	}

	@Test
	void everyClassThePackageTreeNamesLivesInThatPackage() {
		Map<String, String> tree = packageTree();
		List<String> wrong = new ArrayList<>();
		tree.forEach((pkg, text) -> {
			Matcher matcher = CLASS_NAME.matcher(text);
			while (matcher.find()) {
				String name = matcher.group(1);
				if (!OTHERS.contains(name) && !classesByPackage.getOrDefault(pkg, Set.of()).contains(name)
						&& !placedElsewhere(tree, pkg, name)) {
					wrong.add(name + " (named under " + pkg + ")");
				}
			}
		});
		assertThat(wrong).as("classes the tree puts in a package they are not in").isEmpty();
	}

	@Test
	void everyClassNamedWithItsPackageExistsThere() {
		List<String> wrong = new ArrayList<>();
		Matcher matcher = QUALIFIED_NAME.matcher(document);
		while (matcher.find()) {
			String pkg = matcher.group(1).substring(0, matcher.group(1).length() - 1);
			String name = matcher.group(2);
			if (classesByPackage.containsKey(pkg) || pkg.split("\\.").length <= 2) {
				if (!classesByPackage.getOrDefault(pkg, Set.of()).contains(name)) {
					wrong.add(pkg + "." + name);
				}
			}
		}
		assertThat(wrong).as("classes named with a package that does not hold them").isEmpty();
	}

	@Test
	void everyClassNamedExistsInTheProject() {
		List<String> missing = new ArrayList<>();
		Matcher matcher = NAMED_CLASS.matcher(document);
		while (matcher.find()) {
			String name = matcher.group(1);
			if (!OTHERS.contains(name) && !allClasses.contains(name)) {
				missing.add(name);
			}
		}
		assertThat(missing).as("classes named that do not exist").isEmpty();
	}

	@Test
	void everyPackageOfOursIsInTheTreeAndHasARowInTheImportTable() {
		Set<String> packages = new HashSet<>(classesByPackage.keySet());
		packages.removeIf(
				(pkg) -> pkg.isEmpty() || pkg.startsWith("test") || pkg.equals("benchmarks") || pkg.equals("sample"));
		assertThat(packageTree().keySet()).as("packages in the tree").containsAll(packages);
		Set<String> rows = importTableRows();
		Set<String> topLevel = new HashSet<>();
		packages.forEach((pkg) -> topLevel.add(pkg.equals("store.redis") ? pkg : pkg.split("\\.")[0]));
		assertThat(rows).as("rows of the table of who may import whom").containsAll(topLevel);
	}

	/**
	 * Whether a class the tree names under one package is a reference to a class of
	 * another package that the tree names under that one, where it lives.
	 */
	private static boolean placedElsewhere(Map<String, String> tree, String pkg, String name) {
		return tree.entrySet()
			.stream()
			.anyMatch((other) -> !other.getKey().equals(pkg)
					&& classesByPackage.getOrDefault(other.getKey(), Set.of()).contains(name)
					&& Pattern.compile("\\b" + name + "\\b").matcher(other.getValue()).find());
	}

	/**
	 * The text of each package in the tree of the section "Packages, and who may import
	 * whom", by package name.
	 */
	private static Map<String, String> packageTree() {
		int start = document.indexOf("```\nio.github.delayqueue\n");
		assertThat(start).as("the package tree").isNotNegative();
		int end = document.indexOf("```", start + 3);
		Map<String, String> texts = new LinkedHashMap<>();
		List<String> path = new ArrayList<>();
		String current = null;
		Pattern entry = Pattern.compile("^([│ ]*)[├└]── ([a-z]+)/(.*)$");
		for (String line : document.substring(start, end).split("\n")) {
			Matcher matcher = entry.matcher(line);
			String text;
			if (matcher.matches()) {
				int depth = matcher.group(1).length() / 4;
				while (path.size() > depth) {
					path.remove(path.size() - 1);
				}
				path.add(matcher.group(2));
				current = String.join(".", path);
				text = matcher.group(3);
			}
			else {
				text = line;
			}
			if (current != null) {
				texts.merge(current, text, (a, b) -> a + "\n" + b);
			}
		}
		return texts;
	}

	/** The packages in the first column of the table of who may import whom. */
	private static Set<String> importTableRows() {
		int start = document.indexOf("| package | may import (besides itself) |");
		assertThat(start).as("the table of who may import whom").isNotNegative();
		Set<String> rows = new HashSet<>();
		for (String line : document.substring(start).split("\n")) {
			if (!line.startsWith("|")) {
				break;
			}
			String first = line.split("\\|")[1];
			Matcher names = Pattern.compile("`([a-z.]+)`").matcher(first);
			while (names.find()) {
				rows.add(names.group(1));
			}
		}
		return rows;
	}

	/** The types a source declares: the file's own, and those nested in it. */
	private static Set<String> declaredTypes(Path file, String name) {
		Set<String> types = new HashSet<>();
		types.add(name);
		try {
			Matcher matcher = Pattern.compile("\\b(?:class|interface|enum|record|@interface)\\s+([A-Z][A-Za-z0-9]*)")
				.matcher(Files.readString(file));
			while (matcher.find()) {
				types.add(matcher.group(1));
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		return types;
	}

	private static Path projectRoot() {
		Path directory = Path.of("").toAbsolutePath();
		while (directory != null && !Files.exists(directory.resolve("docs/architecture.md"))) {
			directory = directory.getParent();
		}
		assertThat(directory).as("the project's root, holding docs/architecture.md").isNotNull();
		return directory;
	}

}
