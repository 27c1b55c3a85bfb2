package io.github.delayqueue.store;

/**
 * Where a message is in its life, as the operations endpoint reports it.
 */
public enum MessageState {

	/** Waiting for its due time, in the scheduled set. */
	SCHEDULED("z"),

	/** Due and waiting for a consumer, in the ready list. */
	READY("r"),

	/** Claimed by a consumer that holds its lease. */
	IN_FLIGHT("i"),

	/** Failed for good, in the dead-letter set. */
	DEAD("d");

	private final String code;

	MessageState(String code) {
		this.code = code;
	}

	/**
	 * @return the one-letter code the scripts use
	 */
	public String code() {
		return this.code;
	}

	/**
	 * @param code a one-letter code the scripts use
	 * @return the state it stands for
	 * @throws IllegalArgumentException for an unknown code
	 */
	public static MessageState ofCode(String code) {
		for (MessageState state : values()) {
			if (state.code.equals(code)) {
				return state;
			}
		}
		throw new IllegalArgumentException("Unknown message state code '" + code + "'");
	}

}
