package io.github.delayqueue.convert;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ParameterizedTypeReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The payload converters: Jackson 3, Jackson 2 and text only, side by side.
 */
class PayloadConvertersTests {

	static Stream<PayloadConverter> jsonConverters() {
		return Stream.of(new JsonPayloadConverter(new JsonMapper()),
				new Jackson2JsonPayloadConverter(new ObjectMapper()));
	}

	static Stream<PayloadConverter> allConverters() {
		return Stream.concat(jsonConverters(), Stream.of(new TextPayloadConverter()));
	}

	@ParameterizedTest
	@MethodSource("allConverters")
	void storesStringsAsTheirUtf8TextAndBytesAsTheyAre(PayloadConverter converter) {
		byte[] bytes = { 0, -1, 42 };
		assertThat(converter.toBytes("zürich")).isEqualTo("zürich".getBytes(StandardCharsets.UTF_8));
		assertThat(converter.fromBytes("zürich".getBytes(StandardCharsets.UTF_8), String.class)).isEqualTo("zürich");
		assertThat(converter.toBytes(bytes)).isSameAs(bytes);
		assertThat(converter.fromBytes(bytes, byte[].class)).isSameAs(bytes);
		assertThatNoException().isThrownBy(() -> converter.checkReadable(String.class));
		assertThatNoException().isThrownBy(() -> converter.checkReadable(byte[].class));
	}

	@Test
	void bothJacksonLinesWriteTheSameJson() {
		Order order = new Order("o-1", 3);
		byte[] jackson3 = new JsonPayloadConverter(new JsonMapper()).toBytes(order);
		byte[] jackson2 = new Jackson2JsonPayloadConverter(new ObjectMapper()).toBytes(order);
		assertThat(new String(jackson2, StandardCharsets.UTF_8)).isEqualTo(new String(jackson3, StandardCharsets.UTF_8))
			.isEqualTo("{\"id\":\"o-1\",\"items\":3}");
	}

	@ParameterizedTest
	@MethodSource("jsonConverters")
	void readsRecordsAndGenericTypesBack(PayloadConverter converter) {
		assertThat(converter.fromBytes(converter.toBytes(new Order("o-1", 3)), Order.class))
			.isEqualTo(new Order("o-1", 3));
		var listOfOrders = new ParameterizedTypeReference<List<Order>>() {
		}.getType();
		assertThat(converter.fromBytes(converter.toBytes(List.of(new Order("o-2", 1))), listOfOrders))
			.isEqualTo(List.of(new Order("o-2", 1)));
		assertThatNoException().isThrownBy(() -> converter.checkReadable(Order.class));
		assertThatNoException().isThrownBy(() -> converter.checkReadable(listOfOrders));
		assertThatNoException().isThrownBy(() -> converter.checkReadable(Map.class));
	}

	@ParameterizedTest
	@MethodSource("jsonConverters")
	void refusesAbstractTypesWithoutTypeInformationAtStartup(PayloadConverter converter) {
		assertThatExceptionOfType(PayloadConversionException.class)
			.isThrownBy(() -> converter.checkReadable(Shape.class))
			.withMessageContaining("it is abstract");
		var listOfShapes = new ParameterizedTypeReference<List<Shape>>() {
		}.getType();
		assertThatExceptionOfType(PayloadConversionException.class)
			.isThrownBy(() -> converter.checkReadable(listOfShapes))
			.withMessageContaining("it is abstract");
	}

	@ParameterizedTest
	@MethodSource("jsonConverters")
	void refusesClassesJacksonCannotCreateAtStartup(PayloadConverter converter) {
		assertThatExceptionOfType(PayloadConversionException.class)
			.isThrownBy(() -> converter.checkReadable(NoCreator.class))
			.withMessageContaining("no default constructor");
	}

	@ParameterizedTest
	@MethodSource("jsonConverters")
	void reportsUnreadableBytesNamingTheTargetType(PayloadConverter converter) {
		assertThatExceptionOfType(PayloadConversionException.class)
			.isThrownBy(() -> converter.fromBytes("not json".getBytes(StandardCharsets.UTF_8), Order.class))
			.withMessageStartingWith("Cannot read payload as " + Order.class.getTypeName());
	}

	@Test
	void withoutJacksonOtherTypesAreRefusedWithAnExplanation() {
		TextPayloadConverter converter = new TextPayloadConverter();
		assertThatExceptionOfType(PayloadConversionException.class)
			.isThrownBy(() -> converter.checkReadable(Order.class))
			.withMessageContaining("only String and byte[] payloads are supported");
		assertThatExceptionOfType(PayloadConversionException.class)
			.isThrownBy(() -> converter.toBytes(new Order("o-1", 1)))
			.withMessageContaining(Order.class.getTypeName());
	}

	record Order(String id, int items) {
	}

	interface Shape {

	}

	static final class NoCreator {

		private final String name;

		NoCreator(String name, int size) {
			this.name = name + size;
		}

		public String getName() {
			return this.name;
		}

	}

}
