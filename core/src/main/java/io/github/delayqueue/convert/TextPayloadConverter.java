package io.github.delayqueue.convert;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;

/**
 * A {@link PayloadConverter} for {@code String} payloads, stored as their UTF-8 text, and
 * {@code byte[]} payloads, stored as they are. Every other type goes to
 * {@link #writeOther(Object)}, {@link #readOther(byte[], Type)} and
 * {@link #checkOtherReadable(Type)}, which by default refuse it: the converter the
 * auto-configuration uses when no Jackson is on the class path. The JSON converters
 * extend it.
 */
public class TextPayloadConverter implements PayloadConverter {

	@Override
	public final byte[] toBytes(Object payload) {
		if (payload instanceof byte[] bytes) {
			return bytes;
		}
		if (payload instanceof String text) {
			return text.getBytes(StandardCharsets.UTF_8);
		}
		return writeOther(payload);
	}

	@Override
	public final Object fromBytes(byte[] bytes, Type targetType) {
		if (targetType == byte[].class) {
			return bytes;
		}
		if (targetType == String.class) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		return readOther(bytes, targetType);
	}

	@Override
	public final void checkReadable(Type targetType) {
		if (targetType != byte[].class && targetType != String.class) {
			checkOtherReadable(targetType);
		}
	}

	/**
	 * Converts a payload that is neither a {@code String} nor a {@code byte[]}.
	 * @param payload the payload
	 * @return the bytes to store
	 * @throws PayloadConversionException if the payload cannot be written
	 */
	protected byte[] writeOther(Object payload) {
		throw noConverterFor(payload.getClass());
	}

	/**
	 * Reads stored bytes as a type that is neither {@code String} nor {@code byte[]}.
	 * @param bytes the stored bytes
	 * @param targetType the listener's payload type
	 * @return the payload
	 * @throws PayloadConversionException if the bytes cannot be read as that type
	 */
	protected Object readOther(byte[] bytes, Type targetType) {
		throw noConverterFor(targetType);
	}

	/**
	 * Checks at startup that payloads can be read as a type that is neither
	 * {@code String} nor {@code byte[]}.
	 * @param targetType the listener's payload type
	 * @throws PayloadConversionException if no payload can ever be read as that type
	 */
	protected void checkOtherReadable(Type targetType) {
		throw noConverterFor(targetType);
	}

	private static PayloadConversionException noConverterFor(Type type) {
		return new PayloadConversionException("Cannot convert payloads of type " + type.getTypeName()
				+ ": without Jackson on the class path only String and byte[] payloads are supported;"
				+ " add Jackson (com.fasterxml.jackson.core:jackson-databind or tools.jackson.core:jackson-databind)"
				+ " or define a PayloadConverter bean");
	}

}
