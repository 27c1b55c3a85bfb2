package io.github.delayqueue.test;

import io.github.delayqueue.test.redis.TestRedis;

import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionBuilder;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Points an application at the test Redis of this JVM (see {@link TestRedis}), over any
 * {@code spring.data.redis.*} property: for running the application in development
 * without a Redis to hand, from a class in the test sources, e.g.
 * {@code SpringApplication.from(MyApplication::main).with(TestRedisConfiguration.class).run(args)}
 * and {@code ./mvnw spring-boot:test-run}. The Redis stops with the JVM.
 */
@TestConfiguration(proxyBeanMethods = false)
@Import(TestRedisConfiguration.ConnectionDetailsRegistrar.class)
public class TestRedisConfiguration {

	/**
	 * Registers the connection to the test Redis, started on first use, as the connection
	 * details Spring Boot's Redis auto-configuration uses, and a check of Redis' settings
	 * that does not warn that this Redis keeps nothing on disk.
	 */
	static class ConnectionDetailsRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			registry.registerBeanDefinition("testRedisConnectionDetails",
					TestRedisConnectionDetailsFactory.beanDefinition(TestRedis.shared()));
			registry.registerBeanDefinition("testRedisSettingsCheck",
					BeanDefinitionBuilder.genericBeanDefinition(ThrowawayRedisSettingsCheck.class)
						.setAutowireMode(AbstractBeanDefinition.AUTOWIRE_CONSTRUCTOR)
						.getBeanDefinition());
		}

	}

}
