package io.github.delayqueue.benchmarks;

import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a benchmark result as one line of JSON: strings, numbers, booleans and nested
 * maps.
 */
final class JsonLine {

	private JsonLine() {
	}

	static String of(Map<String, ?> values) {
		StringBuilder out = new StringBuilder();
		write(out, values);
		return out.toString();
	}

	private static void write(StringBuilder out, Object value) {
		if (value instanceof Map<?, ?> map) {
			out.append('{');
			Iterator<? extends Map.Entry<?, ?>> entries = map.entrySet().iterator();
			while (entries.hasNext()) {
				Map.Entry<?, ?> entry = entries.next();
				writeString(out, entry.getKey().toString());
				out.append(':');
				write(out, entry.getValue());
				if (entries.hasNext()) {
					out.append(',');
				}
			}
			out.append('}');
		}
		else if (value instanceof Double number) {
			out.append(String.format(Locale.ROOT, "%.3f", number));
		}
		else if (value instanceof Number || value instanceof Boolean) {
			out.append(value);
		}
		else if (value == null) {
			out.append("null");
		}
		else {
			writeString(out, value.toString());
		}
	}

	private static void writeString(StringBuilder out, String text) {
		out.append('"');
		for (char c : text.toCharArray()) {
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				case '\n' -> out.append("\\n");
				default -> {
					if (c < 0x20) {
						out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		out.append('"');
	}

}
