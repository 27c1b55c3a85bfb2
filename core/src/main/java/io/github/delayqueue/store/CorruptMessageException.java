package io.github.delayqueue.store;

/**
 * Thrown when bytes read from Redis are not a message in the stored format.
 */
public class CorruptMessageException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what is wrong
	 */
	public CorruptMessageException(String message) {
		super(message);
	}

}
