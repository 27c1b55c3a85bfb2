package io.github.delayqueue.listener;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Searches an exception's cause chain.
 */
final class ExceptionCauses {

	private ExceptionCauses() {
	}

	/**
	 * The first exception of the chain, the exception itself first, that is an instance
	 * of the type; a cycle in the chain ends the search.
	 * @param exception the exception
	 * @param type the type
	 * @return that exception, or {@code null} if none is
	 */
	static @Nullable Throwable find(Throwable exception, Class<? extends Throwable> type) {
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		for (Throwable current = exception; current != null && seen.add(current); current = current.getCause()) {
			if (type.isInstance(current)) {
				return current;
			}
		}
		return null;
	}

}
