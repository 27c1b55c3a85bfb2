package io.github.delayqueue.store;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * The weights of some groups of a topic, for the claims' turns: a group of weight
 * {@code w} takes up to {@code 16 × w} messages a turn, and its place in the rotation
 * moves on by what it took divided by {@code w}, so that while groups wait, each is
 * served in proportion to its weight. A group not named here weighs 1, as do the messages
 * of no group. Weights share turns, not limits: a group's concurrency limit holds
 * whatever its weight. Immutable.
 */
public final class GroupWeights {

	/** The largest weight accepted. */
	public static final int MAX_WEIGHT = 100;

	/** The most groups that may have a weight: each claim carries them. */
	public static final int MAX_GROUPS = 100;

	/** Every group weighs 1. */
	public static final GroupWeights NONE = new GroupWeights(Map.of());

	private final Map<String, Integer> weights;

	private GroupWeights(Map<String, Integer> weights) {
		this.weights = weights;
	}

	/**
	 * Weights of the given groups; a weight of 1 is left out, as every group has it.
	 * @param weights each group's weight
	 * @return the weights
	 * @throws IllegalArgumentException naming a group whose name or weight is invalid, or
	 * when more than {@value #MAX_GROUPS} groups are named
	 */
	public static GroupWeights of(Map<String, Integer> weights) {
		String problem = problem(weights);
		if (problem != null) {
			throw new IllegalArgumentException(problem);
		}
		Map<String, Integer> kept = new TreeMap<>();
		weights.forEach((group, weight) -> {
			if (weight != 1) {
				kept.put(group, weight);
			}
		});
		return kept.isEmpty() ? NONE : new GroupWeights(Collections.unmodifiableMap(kept));
	}

	/**
	 * Tells what is wrong with weights.
	 * @param weights each group's weight
	 * @return the problem, naming the group, or {@code null} if they are valid
	 */
	public static @Nullable String problem(Map<String, Integer> weights) {
		if (weights.size() > MAX_GROUPS) {
			return "At most " + MAX_GROUPS + " groups may have a weight, but " + weights.size() + " have one";
		}
		for (Map.Entry<String, Integer> entry : weights.entrySet()) {
			try {
				NewMessage.checkGroup(entry.getKey());
			}
			catch (IllegalArgumentException ex) {
				return "A group with a weight has an invalid name: " + ex.getMessage();
			}
			Integer weight = entry.getValue();
			if (weight == null || weight < 1 || weight > MAX_WEIGHT) {
				return "The weight of group '" + entry.getKey() + "' must be between 1 and " + MAX_WEIGHT + ", but was "
						+ weight;
			}
		}
		return null;
	}

	/**
	 * @return whether every group weighs 1
	 */
	public boolean isEmpty() {
		return this.weights.isEmpty();
	}

	/**
	 * @return the weights other than 1, by group, in the groups' order
	 */
	public Map<String, Integer> asMap() {
		return this.weights;
	}

	/**
	 * @param group a group
	 * @return its weight, 1 unless named here
	 */
	public int weightOf(String group) {
		return this.weights.getOrDefault(group, 1);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof GroupWeights that && this.weights.equals(that.weights);
	}

	@Override
	public int hashCode() {
		return this.weights.hashCode();
	}

	@Override
	public String toString() {
		return this.weights.toString();
	}

}
