package io.github.delayqueue.listener;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.StoredMessage;
import org.jspecify.annotations.Nullable;

import org.springframework.core.ResolvableType;
import org.springframework.util.ReflectionUtils;

/**
 * One {@link DelayListener} method: the bean, the method, its topic and settings, and how
 * to turn a stored message into the method's argument, or into one element of it for a
 * batch listener (a {@code List<T>} or {@code List<Delivery<T>>} parameter).
 */
public final class DelayListenerEndpoint {

	private final String topic;

	private final Object bean;

	private final Method method;

	private final ListenerSettings settings;

	private final boolean batch;

	private final boolean wantsDelivery;

	private final Type payloadType;

	/**
	 * Creates an endpoint.
	 * @param topic the topic, placeholders resolved
	 * @param bean the bean
	 * @param method the method to invoke, callable on the bean, with exactly one
	 * parameter
	 * @param settings the resolved settings
	 * @throws IllegalArgumentException if the parameter is a {@code List} without an
	 * element type, or an {@link io.github.delayqueue.producer.InvalidMessageException}
	 * if the topic is not usable
	 */
	public DelayListenerEndpoint(String topic, Object bean, Method method, ListenerSettings settings) {
		Topics.requireValidOrDeadLetters(topic);
		String batchProblem = batchParameterProblem(method);
		if (batchProblem != null) {
			throw new IllegalArgumentException("@DelayListener method " + describe(method) + ": " + batchProblem);
		}
		this.topic = topic;
		this.bean = bean;
		this.method = method;
		this.settings = settings;
		ResolvableType parameter = ResolvableType.forMethodParameter(method, 0);
		this.batch = List.class.equals(parameter.resolve());
		if (this.batch) {
			parameter = parameter.getGeneric(0);
		}
		this.wantsDelivery = Delivery.class.equals(parameter.resolve());
		if (this.wantsDelivery) {
			ResolvableType payload = parameter.getGeneric(0);
			this.payloadType = (payload.resolve() == null) ? String.class : payload.getType();
		}
		else {
			this.payloadType = parameter.getType();
		}
		ReflectionUtils.makeAccessible(method);
	}

	/**
	 * @return the topic
	 */
	public String topic() {
		return this.topic;
	}

	/**
	 * @return the resolved settings
	 */
	public ListenerSettings settings() {
		return this.settings;
	}

	/**
	 * @return whether the method receives a {@code List} of messages at once
	 */
	public boolean isBatch() {
		return this.batch;
	}

	/**
	 * Tells why the method's parameter cannot be a batch: a {@code List} must name its
	 * element type, {@code List<T>} or {@code List<Delivery<T>>}.
	 * @param method a listener method with one parameter
	 * @return the problem, or {@code null} if the parameter is no {@code List} or a
	 * usable one
	 */
	static @Nullable String batchParameterProblem(Method method) {
		ResolvableType parameter = ResolvableType.forMethodParameter(method, 0);
		if (List.class.equals(parameter.resolve()) && parameter.getGeneric(0).resolve() == null) {
			return "a batch listener's parameter must name its element type, List<T> or List<Delivery<T>>, but is "
					+ parameter;
		}
		return null;
	}

	/**
	 * @return the type payloads are read as: the parameter's type, or the payload type of
	 * a {@link Delivery}
	 */
	Type payloadType() {
		return this.payloadType;
	}

	/**
	 * @return a description naming the bean class and method, for logs and errors
	 */
	public String describe() {
		return describe(this.method);
	}

	static String describe(Method method) {
		return method.getDeclaringClass().getName() + "." + method.getName();
	}

	/**
	 * Converts a stored message to the method's argument, or for a batch listener to one
	 * element of it.
	 * @param message the stored message
	 * @param group the group the message was sent in, or {@code null}
	 * @param lateness how long after its due time the message was claimed
	 * @param converter the payload converter
	 * @return the argument
	 * @throws io.github.delayqueue.convert.PayloadConversionException if the payload
	 * cannot be read
	 */
	public Object argument(StoredMessage message, @Nullable String group, Duration lateness,
			PayloadConverter converter) {
		Object payload = converter.fromBytes(message.payload(), this.payloadType);
		if (!this.wantsDelivery) {
			return payload;
		}
		Map<String, String> headers = message.headers();
		return new Delivery<>(message.id(), this.topic, payload, Instant.ofEpochMilli(message.dueAtMillis()),
				message.attempts() + 1, MessageFormat.userHeaders(headers), lateness, MessageFormat.priority(headers),
				headers.get(MessageFormat.ERROR_HEADER), DeadLetter.of(headers), group);
	}

	/**
	 * Invokes the method.
	 * @param argument the argument: for a batch listener, the {@code List} of the
	 * messages' arguments
	 * @throws Throwable what the method threw
	 */
	public void invoke(Object argument) throws Throwable {
		try {
			this.method.invoke(this.bean, argument);
		}
		catch (InvocationTargetException ex) {
			throw ex.getTargetException();
		}
	}

}
