package io.github.delayqueue.listener;

import java.lang.reflect.Method;
import java.time.DateTimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.store.TopicPartitions;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.StringUtils;

/**
 * Finds {@link DelayListener} methods on beans, checks them (failing startup with the
 * method's name when one is not usable, including when the payload converter cannot read
 * its payload type) and registers them with the {@link DelayListenerEndpointRegistry}
 * once all singletons exist.
 */
public class DelayListenerAnnotationBeanPostProcessor
		implements BeanPostProcessor, BeanFactoryAware, SmartInitializingSingleton {

	private @Nullable ConfigurableBeanFactory beanFactory;

	private final List<PendingEndpoint> pending = new ArrayList<>();

	private final Set<String> topics = new LinkedHashSet<>();

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanFactory = (ConfigurableBeanFactory) beanFactory;
	}

	@Override
	public synchronized Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		Map<Method, DelayListener> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<DelayListener>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, DelayListener.class));
		methods.forEach((method, annotation) -> {
			PendingEndpoint endpoint = check(bean, beanName, method, annotation);
			this.pending.add(endpoint);
			this.topics.add(endpoint.topic);
		});
		return bean;
	}

	/**
	 * The topics of the {@link DelayListener} methods found so far, registered or not
	 * yet: once all singletons exist, every topic the application listens to. Per-topic
	 * meters are bound by then, possibly before the endpoints are registered.
	 * @return the topics, in the order found
	 */
	public synchronized Set<String> getTopics() {
		return Collections.unmodifiableSet(new LinkedHashSet<>(this.topics));
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (this.beanFactory == null || this.pending.isEmpty()) {
			return;
		}
		ListenerSettingsProvider settingsProvider = this.beanFactory.getBean(ListenerSettingsProvider.class);
		DelayListenerEndpointRegistry registry = this.beanFactory.getBean(DelayListenerEndpointRegistry.class);
		for (PendingEndpoint endpoint : this.pending) {
			ListenerSettings settings = settingsProvider.forTopic(endpoint.topic);
			if (endpoint.concurrency != null) {
				settings = settings.withConcurrency(endpoint.concurrency);
			}
			if (endpoint.maxAttempts > 0) {
				settings = settings.withMaxAttempts(endpoint.maxAttempts);
			}
			if (endpoint.groupConcurrency != null) {
				settings = settings.withGroupConcurrency(endpoint.groupConcurrency);
			}
			if (endpoint.groupOrder != null) {
				settings = settings.withStrictGroupOrder(endpoint.groupOrder == GroupOrder.STRICT);
			}
			if (endpoint.maxBatchSize != null) {
				settings = settings.withMaxBatchSize(endpoint.maxBatchSize);
			}
			if (endpoint.batchTimeout != null) {
				settings = settings.withBatchTimeout(endpoint.batchTimeout);
			}
			if (endpoint.noRetryFor.length > 0) {
				Set<Class<? extends Throwable>> noRetryFor = new LinkedHashSet<>(settings.noRetryFor());
				noRetryFor.addAll(List.of(endpoint.noRetryFor));
				settings = settings.withNoRetryFor(List.copyOf(noRetryFor));
			}
			if (TopicPartitions.isDeadLetters(endpoint.topic) && settings.latePolicy() == LatePolicy.DEAD_LETTER) {
				throw new InvalidDelayListenerException(DelayListenerEndpoint.describe(endpoint.method),
						"(bean '" + endpoint.beanName + "') late-policy 'dead-letter' on the dead-letter" + " queue '"
								+ endpoint.topic + "' would bury late dead letters in the queue's own dead"
								+ " set instead of delivering them; remove delay-queue.topics[" + endpoint.topic
								+ "].late-policy (a dead-letter queue delivers late by default)",
						null);
			}
			try {
				registry.register(new DelayListenerEndpoint(endpoint.topic, endpoint.bean, endpoint.method, settings));
			}
			catch (IllegalArgumentException | IllegalStateException ex) {
				String method = DelayListenerEndpoint.describe(endpoint.method);
				throw new InvalidDelayListenerException(method,
						"(bean '" + endpoint.beanName + "') " + withoutMethod(String.valueOf(ex.getMessage()), method),
						ex);
			}
		}
		this.pending.clear();
	}

	private PendingEndpoint check(Object bean, String beanName, Method method, DelayListener annotation) {
		String name = method.getDeclaringClass().getName() + "." + method.getName();
		if (method.getParameterCount() != 1) {
			throw new InvalidDelayListenerException(name, "it must take exactly one parameter (the payload or a"
					+ " Delivery), but takes " + method.getParameterCount(), null);
		}
		String topic = resolve(annotation.topic());
		try {
			Topics.requireValid(topic);
		}
		catch (InvalidMessageException ex) {
			throw new InvalidDelayListenerException(name, String.valueOf(ex.getMessage()), null);
		}
		if (annotation.deadLetters()) {
			topic = TopicPartitions.deadLettersOf(topic);
		}
		Integer concurrency = null;
		String concurrencyText = resolve(annotation.concurrency());
		if (StringUtils.hasText(concurrencyText)) {
			try {
				concurrency = Integer.parseInt(concurrencyText.trim());
			}
			catch (NumberFormatException ex) {
				concurrency = 0;
			}
			if (concurrency < 1) {
				throw new InvalidDelayListenerException(name,
						"concurrency must be a whole number of at least 1, but was '" + concurrencyText + "'", null);
			}
		}
		Integer groupConcurrency = groupConcurrency(name, topic, resolve(annotation.groupConcurrency()));
		GroupOrder groupOrder = groupOrder(name, topic, resolve(annotation.groupOrder()));
		String batchProblem = DelayListenerEndpoint.batchParameterProblem(method);
		if (batchProblem != null) {
			throw new InvalidDelayListenerException(name, batchProblem, null);
		}
		Integer maxBatchSize = null;
		String maxBatchSizeText = resolve(annotation.maxBatchSize());
		if (StringUtils.hasText(maxBatchSizeText)) {
			String problem;
			try {
				maxBatchSize = Integer.parseInt(maxBatchSizeText.trim());
				problem = ListenerSettings.maxBatchSizeProblem(maxBatchSize);
			}
			catch (NumberFormatException ex) {
				problem = "must be a whole number, but was '" + maxBatchSizeText + "'";
			}
			if (problem != null) {
				throw new InvalidDelayListenerException(name, "(topic '" + topic + "') maxBatchSize " + problem, null);
			}
		}
		Duration batchTimeout = null;
		String batchTimeoutText = resolve(annotation.batchTimeout());
		if (StringUtils.hasText(batchTimeoutText)) {
			String problem;
			try {
				batchTimeout = DurationFormatterUtils.detectAndParse(batchTimeoutText.trim());
				problem = ListenerSettings.batchTimeoutProblem(batchTimeout);
			}
			catch (IllegalArgumentException | DateTimeException ex) {
				problem = "must be a duration such as '200ms' or 'PT1S', but was '" + batchTimeoutText + "'";
			}
			if (problem != null) {
				throw new InvalidDelayListenerException(name, "(topic '" + topic + "') batchTimeout " + problem, null);
			}
		}
		Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
		return new PendingEndpoint(topic, bean, beanName, invocable, concurrency, groupConcurrency, groupOrder,
				annotation.maxAttempts(), maxBatchSize, batchTimeout, annotation.noRetryFor());
	}

	/**
	 * Parses the annotation's group concurrency: 1 to
	 * {@link ListenerSettings#MAX_GROUP_CONCURRENCY}, or empty for the topic's property;
	 * no 0, as empty is how an annotation leaves the limit to the property.
	 * @return the group concurrency, or {@code null} if the annotation sets none
	 */
	private static @Nullable Integer groupConcurrency(String name, String topic, String text) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		Integer groupConcurrency = null;
		try {
			groupConcurrency = Integer.parseInt(text.trim());
		}
		catch (NumberFormatException ex) {
			// named below
		}
		if (groupConcurrency == null || groupConcurrency < 1
				|| ListenerSettings.groupConcurrencyProblem(groupConcurrency) != null) {
			throw new InvalidDelayListenerException(name,
					"(topic '" + topic + "') groupConcurrency must be a whole number between 1 and "
							+ ListenerSettings.MAX_GROUP_CONCURRENCY + " (empty for the topic's property, else no"
							+ " limit), but was '" + text + "'",
					null);
		}
		return groupConcurrency;
	}

	/**
	 * Parses the annotation's group order: {@code strict} or {@code relaxed}, in any
	 * case, or empty for the topic's property.
	 * @return the group order, or {@code null} if the annotation sets none
	 */
	private static @Nullable GroupOrder groupOrder(String name, String topic, String text) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		for (GroupOrder order : GroupOrder.values()) {
			if (order.name().equalsIgnoreCase(text.trim())) {
				return order;
			}
		}
		throw new InvalidDelayListenerException(name,
				"(topic '" + topic
						+ "') groupOrder must be 'strict' or 'relaxed' (empty for the topic's property), but was '"
						+ text + "'",
				null);
	}

	/**
	 * @return a message about a listener method without the words that name it, which the
	 * exception adds
	 */
	private static String withoutMethod(String message, String method) {
		String named = "@DelayListener method " + method;
		if (!message.startsWith(named)) {
			return message;
		}
		String rest = message.substring(named.length());
		return rest.startsWith(": ") ? rest.substring(2) : rest.strip();
	}

	private String resolve(String value) {
		if (this.beanFactory == null) {
			return value;
		}
		String resolved = this.beanFactory.resolveEmbeddedValue(value);
		return (resolved != null) ? resolved : value;
	}

	private record PendingEndpoint(String topic, Object bean, String beanName, Method method,
			@Nullable Integer concurrency, @Nullable Integer groupConcurrency, @Nullable GroupOrder groupOrder,
			int maxAttempts, @Nullable Integer maxBatchSize, @Nullable Duration batchTimeout,
			Class<? extends Throwable>[] noRetryFor) {
	}

}
