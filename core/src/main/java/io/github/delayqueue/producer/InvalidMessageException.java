package io.github.delayqueue.producer;

/**
 * Thrown when a message, topic or listener cannot be accepted. Nothing has been stored
 * when it is thrown.
 */
public class InvalidMessageException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what is wrong, naming the offending value
	 */
	public InvalidMessageException(String message) {
		super(message);
	}

}
