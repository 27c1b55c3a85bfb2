package io.github.delayqueue.convert;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The default {@link PayloadConverter}: {@code String} payloads are stored as their UTF-8 text,
 * {@code byte[]} as they are, everything else as JSON written and read by the application's
 * Jackson {@link JsonMapper}.
 */
public class JsonPayloadConverter implements PayloadConverter {

	private final JsonMapper jsonMapper;

	/**
	 * Creates a converter.
	 * @param jsonMapper the mapper for payloads other than {@code String} and {@code byte[]}
	 */
	public JsonPayloadConverter(JsonMapper jsonMapper) {
		this.jsonMapper = jsonMapper;
	}

	@Override
	public byte[] toBytes(Object payload) {
		if (payload instanceof byte[] bytes) {
			return bytes;
		}
		if (payload instanceof String text) {
			return text.getBytes(StandardCharsets.UTF_8);
		}
		try {
			return this.jsonMapper.writeValueAsBytes(payload);
		}
		catch (JacksonException ex) {
			throw new PayloadConversionException(
					"Cannot write payload of type " + payload.getClass().getName() + " as JSON: " + ex.getOriginalMessage(), ex);
		}
	}

	@Override
	public Object fromBytes(byte[] bytes, Type targetType) {
		if (targetType == byte[].class) {
			return bytes;
		}
		if (targetType == String.class) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		try {
			return this.jsonMapper.readValue(bytes, this.jsonMapper.getTypeFactory().constructType(targetType));
		}
		catch (JacksonException ex) {
			throw new PayloadConversionException(
					"Cannot read payload as " + targetType.getTypeName() + ": " + ex.getOriginalMessage(), ex);
		}
	}

}
