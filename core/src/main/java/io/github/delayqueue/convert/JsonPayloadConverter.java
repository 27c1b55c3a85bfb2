package io.github.delayqueue.convert;

import java.lang.reflect.Type;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.deser.AbstractDeserializer;
import tools.jackson.databind.deser.ValueInstantiator;
import tools.jackson.databind.json.JsonMapper;

/**
 * The default {@link PayloadConverter} with Jackson 3: {@code String} payloads are stored
 * as their UTF-8 text, {@code byte[]} as they are, everything else as JSON written and
 * read by the application's {@link JsonMapper}. {@link #checkReadable(Type)} asks the
 * mapper for a deserializer of the type and fails for types it cannot create: abstract
 * types without type information and classes without a creator (no default constructor,
 * no {@code @JsonCreator}, not a record). {@link Jackson2JsonPayloadConverter} does the
 * same with Jackson 2.
 */
public class JsonPayloadConverter extends TextPayloadConverter {

	private final JsonMapper jsonMapper;

	/**
	 * Creates a converter.
	 * @param jsonMapper the mapper for payloads other than {@code String} and
	 * {@code byte[]}
	 */
	public JsonPayloadConverter(JsonMapper jsonMapper) {
		this.jsonMapper = jsonMapper;
	}

	@Override
	protected byte[] writeOther(Object payload) {
		try {
			return this.jsonMapper.writeValueAsBytes(payload);
		}
		catch (JacksonException ex) {
			throw new PayloadConversionException("Cannot write payload of type " + payload.getClass().getName()
					+ " as JSON: " + ex.getOriginalMessage(), ex);
		}
	}

	@Override
	protected Object readOther(byte[] bytes, Type targetType) {
		try {
			return this.jsonMapper.readValue(bytes, this.jsonMapper.getTypeFactory().constructType(targetType));
		}
		catch (JacksonException ex) {
			throw new PayloadConversionException(
					"Cannot read payload as " + targetType.getTypeName() + ": " + ex.getOriginalMessage(), ex);
		}
	}

	@Override
	protected void checkOtherReadable(Type targetType) {
		try {
			// Jackson 3's public way to a deserialization context, as
			// ObjectMapper.readValue uses.
			requireCreatable(this.jsonMapper._deserializationContext(),
					this.jsonMapper.getTypeFactory().constructType(targetType));
		}
		catch (JacksonException ex) {
			throw new PayloadConversionException(
					"Cannot read payloads as " + targetType.getTypeName() + ": " + ex.getOriginalMessage(), ex);
		}
	}

	private static void requireCreatable(DeserializationContext context, JavaType type) {
		if (context.findTypeDeserializer(type) != null) {
			return;
		}
		ValueDeserializer<Object> deserializer = context.findRootValueDeserializer(type);
		if (deserializer instanceof AbstractDeserializer) {
			throw new PayloadConversionException("Cannot read payloads as " + type.toCanonical() + ": it is abstract"
					+ " and has no type information; use a concrete class or add @JsonTypeInfo");
		}
		@Nullable ValueInstantiator instantiator = (deserializer instanceof ValueInstantiator.Gettable gettable)
				? gettable.getValueInstantiator() : null;
		if (instantiator != null && !instantiator.canInstantiate()) {
			throw new PayloadConversionException("Cannot read payloads as " + type.toCanonical() + ": Jackson cannot"
					+ " create it, as it has no default constructor and no @JsonCreator constructor or factory method");
		}
		if (type.isContainerType() || type.isReferenceType()) {
			requireCreatable(context, type.getContentType());
		}
	}

}
