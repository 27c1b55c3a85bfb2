package io.github.delayqueue.test;

import java.util.List;

import io.github.delayqueue.test.redis.TestRedis;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * Makes the Spring Boot Redis connection details that point an application at a test
 * Redis, over any {@code spring.data.redis.*} property: a standalone node, no Sentinel,
 * no Cluster. Spring Boot 3 and 4 name that type differently, so the test kit of each
 * line provides one in {@code META-INF/spring.factories}.
 */
public interface TestRedisConnectionDetailsFactory {

	/**
	 * @return the type of Spring Boot's Redis connection details on this line
	 */
	Class<?> connectionDetailsType();

	/**
	 * Makes connection details that point at a test Redis.
	 * @param redis the test Redis
	 * @return connection details of {@link #connectionDetailsType()}
	 */
	Object connectionDetails(TestRedis redis);

	/**
	 * A bean definition of connection details that point at a test Redis, typed so that
	 * Spring Boot's Redis auto-configuration uses it instead of its own.
	 * @param redis the test Redis
	 * @return the bean definition
	 */
	static BeanDefinition beanDefinition(TestRedis redis) {
		TestRedisConnectionDetailsFactory factory = ofThisLine();
		RootBeanDefinition definition = new RootBeanDefinition(factory.connectionDetailsType());
		definition.setInstanceSupplier(() -> factory.connectionDetails(redis));
		return definition;
	}

	/**
	 * @return the factory of the Spring Boot line on the class path
	 * @throws IllegalStateException if no test kit of a Spring Boot line is there
	 */
	static TestRedisConnectionDetailsFactory ofThisLine() {
		List<TestRedisConnectionDetailsFactory> factories = SpringFactoriesLoader.loadFactories(
				TestRedisConnectionDetailsFactory.class, TestRedisConnectionDetailsFactory.class.getClassLoader());
		if (factories.isEmpty()) {
			throw new IllegalStateException("No delay-queue test kit of a Spring Boot line on the class path: add"
					+ " io.github.delayqueue:delay-queue-test (Spring Boot 4) or"
					+ " io.github.delayqueue:delay-queue-spring-boot-3-test (Spring Boot 3)");
		}
		return factories.get(0);
	}

}
