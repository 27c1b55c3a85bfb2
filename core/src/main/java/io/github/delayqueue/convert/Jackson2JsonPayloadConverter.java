package io.github.delayqueue.convert;

import java.io.IOException;
import java.lang.reflect.Type;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.AbstractDeserializer;
import com.fasterxml.jackson.databind.deser.DefaultDeserializationContext;
import com.fasterxml.jackson.databind.deser.ValueInstantiator;
import org.jspecify.annotations.Nullable;

/**
 * The default {@link PayloadConverter} with Jackson 2, for applications whose
 * {@link ObjectMapper} is Jackson 2's (Spring Boot 3): {@code String} payloads are stored
 * as their UTF-8 text, {@code byte[]} as they are, everything else as JSON. It writes the
 * same JSON as {@link JsonPayloadConverter} and refuses the same types at startup:
 * abstract types without type information and classes Jackson cannot create.
 */
public class Jackson2JsonPayloadConverter extends TextPayloadConverter {

	private final ObjectMapper objectMapper;

	/**
	 * Creates a converter.
	 * @param objectMapper the mapper for payloads other than {@code String} and
	 * {@code byte[]}
	 */
	public Jackson2JsonPayloadConverter(ObjectMapper objectMapper) {
		this.objectMapper = objectMapper;
	}

	@Override
	protected byte[] writeOther(Object payload) {
		try {
			return this.objectMapper.writeValueAsBytes(payload);
		}
		catch (JsonProcessingException ex) {
			throw new PayloadConversionException("Cannot write payload of type " + payload.getClass().getName()
					+ " as JSON: " + ex.getOriginalMessage(), ex);
		}
	}

	@Override
	protected Object readOther(byte[] bytes, Type targetType) {
		try {
			return this.objectMapper.readValue(bytes, this.objectMapper.getTypeFactory().constructType(targetType));
		}
		catch (IOException ex) {
			throw new PayloadConversionException("Cannot read payload as " + targetType.getTypeName() + ": "
					+ ((ex instanceof JsonProcessingException json) ? json.getOriginalMessage() : ex.getMessage()), ex);
		}
	}

	@Override
	protected void checkOtherReadable(Type targetType) {
		DeserializationConfig config = this.objectMapper.getDeserializationConfig();
		// The mapper's blueprint context, made ready for its configuration as
		// ObjectMapper.readValue does.
		DeserializationContext context = ((DefaultDeserializationContext) this.objectMapper.getDeserializationContext())
			.createInstance(config, null, this.objectMapper.getInjectableValues());
		try {
			requireCreatable(context, config, this.objectMapper.getTypeFactory().constructType(targetType));
		}
		catch (JsonProcessingException ex) {
			throw new PayloadConversionException(
					"Cannot read payloads as " + targetType.getTypeName() + ": " + ex.getOriginalMessage(), ex);
		}
	}

	private static void requireCreatable(DeserializationContext context, DeserializationConfig config, JavaType type)
			throws JsonProcessingException {
		if (context.getFactory().findTypeDeserializer(config, type) != null) {
			return;
		}
		JsonDeserializer<Object> deserializer = context.findRootValueDeserializer(type);
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
			requireCreatable(context, config, type.getContentType());
		}
	}

}
