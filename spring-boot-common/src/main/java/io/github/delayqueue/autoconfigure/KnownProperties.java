package io.github.delayqueue.autoconfigure;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.ResolvableType;

/**
 * The keys {@link DelayQueueProperties} binds, read from its JavaBean properties: each
 * property of a nested properties class is a segment, a {@code Map<String, X>} a wildcard
 * segment ({@code delay-queue.topics.<topic>.*}), a list or array takes indexes. Tells
 * whether a key is one of them, and which known key is closest to one that is not.
 */
final class KnownProperties {

	/**
	 * Keys under {@code delay-queue.} that are not properties of the application but are
	 * read elsewhere: the test kit's Redis binary (a system property).
	 */
	private static final List<String> EXTRA_KEYS = List.of("test.redis-binary");

	private final Node root;

	private final List<List<Segment>> leaves = new ArrayList<>();

	private KnownProperties(Node root) {
		this.root = root;
		collectLeaves(root, new ArrayList<>());
	}

	/**
	 * @return the keys of {@link DelayQueueProperties}
	 */
	static KnownProperties ofDelayQueueProperties() {
		Node root = bean(DelayQueueProperties.class);
		for (String extra : EXTRA_KEYS) {
			Node node = root;
			for (String segment : extra.split("\\.")) {
				node = node.children.computeIfAbsent(uniformElement(segment), (name) -> new Node(Kind.BEAN, false));
				node.dashedName = segment;
			}
			node.kind = Kind.LEAF;
		}
		return new KnownProperties(root);
	}

	/**
	 * Whether a name below {@code delay-queue} is bound (or, for a name that ends on a
	 * group such as {@code delay-queue.listener}, could hold bound keys).
	 * @param name the name, {@code delay-queue} its first element
	 * @return whether it is known
	 */
	boolean isKnown(ConfigurationPropertyName name) {
		Node node = this.root;
		int count = name.getNumberOfElements();
		for (int i = 1; i < count; i++) {
			switch (node.kind) {
				case LEAF -> {
					return node.indexed && i == count - 1 && name.isNumericIndex(i);
				}
				case MAP -> node = Objects.requireNonNull(node.value);
				case BEAN -> {
					Node child = node.children
						.get(uniformElement(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL)));
					if (child == null) {
						return false;
					}
					node = child;
				}
			}
		}
		return true;
	}

	/**
	 * The known key closest to an unknown one, with the map keys (topic, schedule names)
	 * the unknown one used.
	 * @param name the unknown name, {@code delay-queue} its first element
	 * @return the closest known key, in its dashed form, and how many edits away
	 */
	Closest closest(ConfigurationPropertyName name) {
		String unknown = uniform(name);
		@Nullable String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (List<Segment> leaf : this.leaves) {
			StringBuilder dashed = new StringBuilder("delay-queue");
			StringBuilder same = new StringBuilder("delayqueue");
			for (int i = 0; i < leaf.size(); i++) {
				Segment segment = leaf.get(i);
				if (segment.placeholder() != null) {
					boolean given = i + 1 < name.getNumberOfElements();
					String key = given ? name.getElement(i + 1, ConfigurationPropertyName.Form.ORIGINAL)
							: segment.placeholder();
					dashed.append(given && !key.matches("[a-z0-9-]+") ? "[" + key + "]" : "." + key);
					same.append('.').append(given ? uniformElement(key) : key);
				}
				else {
					dashed.append('.').append(segment.name());
					same.append('.').append(uniformElement(segment.name()));
				}
			}
			int distance = distance(unknown, same.toString());
			if (distance < bestDistance) {
				bestDistance = distance;
				best = dashed.toString();
			}
		}
		return (best != null) ? new Closest(best, bestDistance) : new Closest("delay-queue.enabled", Integer.MAX_VALUE);
	}

	private void collectLeaves(Node node, List<Segment> path) {
		switch (node.kind) {
			case LEAF -> this.leaves.add(List.copyOf(path));
			case MAP -> {
				path.add(new Segment(null, node.placeholder));
				collectLeaves(Objects.requireNonNull(node.value), path);
				path.remove(path.size() - 1);
			}
			case BEAN -> node.children.forEach((name, child) -> {
				path.add(new Segment(child.dashedName, null));
				collectLeaves(child, path);
				path.remove(path.size() - 1);
			});
		}
	}

	private static Node bean(Class<?> type) {
		Node node = new Node(Kind.BEAN, false);
		for (PropertyDescriptor property : BeanUtils.getPropertyDescriptors(type)) {
			Method getter = property.getReadMethod();
			if (getter == null || getter.getDeclaringClass() == Object.class) {
				continue;
			}
			ResolvableType propertyType = ResolvableType.forMethodReturnType(getter);
			Node child = node(propertyType, property.getName());
			child.dashedName = dashed(property.getName());
			node.children.put(uniformElement(child.dashedName), child);
		}
		return node;
	}

	private static Node node(ResolvableType type, String propertyName) {
		Class<?> raw = type.resolve(Object.class);
		if (Map.class.isAssignableFrom(raw)) {
			Node map = new Node(Kind.MAP, false);
			map.placeholder = "topics".equals(propertyName) ? "<topic>" : "<name>";
			map.value = node(type.asMap().getGeneric(1), propertyName);
			return map;
		}
		if (raw.getDeclaringClass() == DelayQueueProperties.class && !raw.isEnum()) {
			return bean(raw);
		}
		return new Node(Kind.LEAF, raw.isArray() || Collection.class.isAssignableFrom(raw));
	}

	private static String dashed(String camelCase) {
		StringBuilder dashed = new StringBuilder();
		for (char c : camelCase.toCharArray()) {
			if (Character.isUpperCase(c)) {
				dashed.append('-').append(Character.toLowerCase(c));
			}
			else {
				dashed.append(c);
			}
		}
		return dashed.toString();
	}

	/** Lower case without dashes, as Spring Boot compares property names. */
	private static String uniformElement(String element) {
		return element.replace("-", "").toLowerCase(Locale.ROOT);
	}

	private static String uniform(ConfigurationPropertyName name) {
		StringBuilder uniform = new StringBuilder();
		for (int i = 0; i < name.getNumberOfElements(); i++) {
			uniform.append((i > 0) ? "." : "")
				.append(uniformElement(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL)));
		}
		return uniform.toString();
	}

	/** The Levenshtein distance of two strings. */
	static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	/**
	 * The known key closest to an unknown one.
	 *
	 * @param key the known key, in its dashed form, with the map keys of the unknown one
	 * @param distance how many characters to change, add or remove to turn one into the
	 * other (ignoring dashes and case)
	 */
	record Closest(String key, int distance) {
	}

	private enum Kind {

		LEAF, MAP, BEAN

	}

	/** A segment of a known key: a property name, or a map key's placeholder. */
	private record Segment(@Nullable String name, @Nullable String placeholder) {
	}

	private static final class Node {

		private Kind kind;

		/** Whether a leaf takes indexes, {@code [0]}: a list or an array. */
		private final boolean indexed;

		private final Map<String, Node> children = new LinkedHashMap<>();

		private @Nullable Node value;

		private String placeholder = "<name>";

		private String dashedName = "";

		Node(Kind kind, boolean indexed) {
			this.kind = kind;
			this.indexed = indexed;
		}

	}

}
