package io.github.delayqueue.store;

import java.util.UUID;

/**
 * New random tokens for consumer ids and leases.
 */
public final class LeaseTokens {

	private LeaseTokens() {
	}

	/**
	 * @return a new random token of 16 hex digits
	 */
	public static String newToken() {
		return UUID.randomUUID().toString().replace("-", "").substring(0, 16);
	}

}
