package io.github.delayqueue.convert;

/**
 * Thrown when a payload cannot be converted. A message whose payload cannot be read is
 * dead-lettered at once, without retries.
 */
public class PayloadConversionException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what cannot be converted and why
	 */
	public PayloadConversionException(String message) {
		super(message);
	}

	/**
	 * Creates the exception.
	 * @param message what could not be converted
	 * @param cause the converter's failure
	 */
	public PayloadConversionException(String message, Throwable cause) {
		super(message, cause);
	}

}
