package io.github.delayqueue.autoconfigure;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.delayqueue.convert.Jackson2JsonPayloadConverter;
import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.convert.TextPayloadConverter;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@link PayloadConverter} unless the application defines one, first that applies:
 * JSON with the application's Jackson 3 {@link JsonMapper}, then with its Jackson 2
 * {@link ObjectMapper}, then with a default mapper of whichever Jackson is on the class
 * path (3 before 2), and without Jackson, {@code String} and {@code byte[]} payloads
 * only.
 */
final class PayloadConverterConfigurations {

	private PayloadConverterConfigurations() {
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(JsonMapper.class)
	@ConditionalOnBean(JsonMapper.class)
	@ConditionalOnMissingBean(PayloadConverter.class)
	static class ApplicationJackson3 {

		@Bean
		PayloadConverter delayQueuePayloadConverter(JsonMapper jsonMapper) {
			return new JsonPayloadConverter(jsonMapper);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(ObjectMapper.class)
	@ConditionalOnBean(ObjectMapper.class)
	@ConditionalOnMissingBean(PayloadConverter.class)
	static class ApplicationJackson2 {

		@Bean
		PayloadConverter delayQueuePayloadConverter(ObjectMapper objectMapper) {
			return new Jackson2JsonPayloadConverter(objectMapper);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(JsonMapper.class)
	@ConditionalOnMissingBean(PayloadConverter.class)
	static class DefaultJackson3 {

		@Bean
		PayloadConverter delayQueuePayloadConverter() {
			return new JsonPayloadConverter(new JsonMapper());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(ObjectMapper.class)
	@ConditionalOnMissingBean(PayloadConverter.class)
	static class DefaultJackson2 {

		@Bean
		PayloadConverter delayQueuePayloadConverter() {
			return new Jackson2JsonPayloadConverter(new ObjectMapper());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingBean(PayloadConverter.class)
	static class TextOnly {

		@Bean
		PayloadConverter delayQueuePayloadConverter() {
			return new TextPayloadConverter();
		}

	}

}
