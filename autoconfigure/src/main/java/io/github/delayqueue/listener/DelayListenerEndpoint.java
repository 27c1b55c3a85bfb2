package io.github.delayqueue.listener;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.store.StoredMessage;

import org.springframework.core.ResolvableType;
import org.springframework.util.ReflectionUtils;

/**
 * One {@link DelayListener} method: the bean, the method, its topic and settings, and how
 * to turn a stored message into the method's argument.
 */
public final class DelayListenerEndpoint {

	private final String topic;

	private final Object bean;

	private final Method method;

	private final ListenerSettings settings;

	private final boolean wantsDelivery;

	private final Type payloadType;

	/**
	 * Creates an endpoint.
	 * @param topic the topic, placeholders resolved
	 * @param bean the bean
	 * @param method the method to invoke, callable on the bean, with exactly one
	 * parameter
	 * @param settings the resolved settings
	 */
	public DelayListenerEndpoint(String topic, Object bean, Method method, ListenerSettings settings) {
		this.topic = topic;
		this.bean = bean;
		this.method = method;
		this.settings = settings;
		ResolvableType parameter = ResolvableType.forMethodParameter(method, 0);
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
		return this.method.getDeclaringClass().getName() + "." + this.method.getName();
	}

	/**
	 * Converts a stored message to the method's argument.
	 * @param topic the topic
	 * @param message the stored message
	 * @param lateness how long after its due time the message was claimed
	 * @param converter the payload converter
	 * @return the argument
	 * @throws io.github.delayqueue.convert.PayloadConversionException if the payload
	 * cannot be read
	 */
	public Object argument(StoredMessage message, Duration lateness, PayloadConverter converter) {
		Object payload = converter.fromBytes(message.payload(), this.payloadType);
		if (!this.wantsDelivery) {
			return payload;
		}
		return new Delivery<>(message.id(), this.topic, payload, Instant.ofEpochMilli(message.dueAtMillis()),
				message.attempts() + 1, message.headers(), lateness);
	}

	/**
	 * Invokes the method.
	 * @param argument the argument
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
