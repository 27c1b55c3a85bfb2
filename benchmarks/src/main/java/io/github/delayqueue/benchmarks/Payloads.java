package io.github.delayqueue.benchmarks;

/**
 * Benchmark payloads: {@code <sequence>:<due ms>:} padded with dots to a fixed size, so
 * the consumer can tell which message it got and how late it is.
 */
final class Payloads {

	static final int SIZE = 100;

	private static final String PADDING = ".".repeat(SIZE);

	private Payloads() {
	}

	static String of(long sequence, long dueAtMillis) {
		String head = sequence + ":" + dueAtMillis + ":";
		return head + PADDING.substring(head.length());
	}

	static int sequence(String payload) {
		return Integer.parseInt(payload.substring(0, payload.indexOf(':')));
	}

	static long dueAtMillis(String payload) {
		int first = payload.indexOf(':');
		return Long.parseLong(payload.substring(first + 1, payload.indexOf(':', first + 1)));
	}

}
