package io.github.delayqueue.convert;

import java.lang.reflect.Type;

/**
 * Converts payloads to the bytes stored in Redis and back. The target type always comes
 * from the listener method, never from type information inside the message.
 */
public interface PayloadConverter {

	/**
	 * Converts a payload to bytes.
	 * @param payload the payload
	 * @return the bytes to store
	 * @throws PayloadConversionException if the payload cannot be written
	 */
	byte[] toBytes(Object payload);

	/**
	 * Converts stored bytes to the listener's type.
	 * @param bytes the stored bytes
	 * @param targetType the listener's payload type
	 * @return the payload
	 * @throws PayloadConversionException if the bytes cannot be read as that type
	 */
	Object fromBytes(byte[] bytes, Type targetType);

	/**
	 * Checks, once at startup, that payloads can be read as a listener's type at all, so
	 * that a type the converter cannot build fails startup rather than the first
	 * delivery. The default checks nothing.
	 * @param targetType the listener's payload type
	 * @throws PayloadConversionException if no payload can ever be read as that type,
	 * saying why
	 */
	default void checkReadable(Type targetType) {
	}

}
