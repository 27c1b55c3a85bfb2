package io.github.delayqueue.autoconfigure;

import java.util.List;

/**
 * Keys under {@code delay-queue.} that no property binds, with
 * {@code delay-queue.fail-on-unknown-properties=true}.
 */
public class UnknownPropertiesException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final List<String> problems;

	/**
	 * Creates the exception.
	 * @param problems a sentence for each unknown key: its name, where it was set and the
	 * closest known key
	 */
	public UnknownPropertiesException(List<String> problems) {
		super(String.join("\n", problems));
		this.problems = List.copyOf(problems);
	}

	/**
	 * @return a sentence for each unknown key: its name, where it was set and the closest
	 * known key
	 */
	public List<String> getProblems() {
		return this.problems;
	}

}
