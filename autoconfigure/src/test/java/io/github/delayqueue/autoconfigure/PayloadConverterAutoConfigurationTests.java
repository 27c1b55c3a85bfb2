package io.github.delayqueue.autoconfigure;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.delayqueue.convert.Jackson2JsonPayloadConverter;
import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.convert.TextPayloadConverter;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which {@link PayloadConverter} the auto-configuration picks, by the Jackson the
 * application has.
 */
class PayloadConverterAutoConfigurationTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix());

	@Test
	void jackson3WritesWithTheApplicationsJsonMapper() {
		this.runner
			.withBean("jsonMapper", JsonMapper.class,
					() -> JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build())
			.run((context) -> {
				PayloadConverter converter = context.getBean(PayloadConverter.class);
				assertThat(converter).isInstanceOf(JsonPayloadConverter.class);
				assertThat(json(converter)).isEqualTo("{\"order_id\":\"o-1\"}");
			});
	}

	@Test
	void withoutJackson3TheApplicationsJackson2ObjectMapperIsUsed() {
		this.runner.withClassLoader(new FilteredClassLoader(JsonMapper.class))
			.withBean("objectMapper", ObjectMapper.class,
					() -> new ObjectMapper()
						.setPropertyNamingStrategy(com.fasterxml.jackson.databind.PropertyNamingStrategies.SNAKE_CASE))
			.run((context) -> {
				PayloadConverter converter = context.getBean(PayloadConverter.class);
				assertThat(converter).isInstanceOf(Jackson2JsonPayloadConverter.class);
				assertThat(json(converter)).isEqualTo("{\"order_id\":\"o-1\"}");
			});
	}

	@Test
	void withoutAnyMapperBeanADefaultJackson2MapperIsUsed() {
		this.runner.withClassLoader(new FilteredClassLoader(JsonMapper.class)).run((context) -> {
			PayloadConverter converter = context.getBean(PayloadConverter.class);
			assertThat(converter).isInstanceOf(Jackson2JsonPayloadConverter.class);
			assertThat(json(converter)).isEqualTo("{\"orderId\":\"o-1\"}");
		});
	}

	@Test
	void withoutJacksonOnlyTextAndBytesAreConverted() {
		this.runner.withClassLoader(new FilteredClassLoader(JsonMapper.class, ObjectMapper.class)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(PayloadConverter.class)).isExactlyInstanceOf(TextPayloadConverter.class);
		});
	}

	@Test
	void anApplicationsOwnConverterWins() {
		PayloadConverter own = new TextPayloadConverter();
		this.runner.withBean(PayloadConverter.class, () -> own)
			.run((context) -> assertThat(context.getBean(PayloadConverter.class)).isSameAs(own));
	}

	private static String json(PayloadConverter converter) {
		return new String(converter.toBytes(new Order("o-1")), StandardCharsets.UTF_8);
	}

	record Order(String orderId) {
	}

}
