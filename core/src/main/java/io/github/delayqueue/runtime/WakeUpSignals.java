package io.github.delayqueue.runtime;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;

/**
 * Receives the wake-up signals that scripts publish on the prefix's signal channel and
 * passes them to this application's brokers and listeners: {@code b<topic>} when a
 * message became the earliest due (wakes the topic's broker), {@code r<topic>} when
 * messages became ready (wakes the topic's listener). Signals only shorten waits: a lost
 * signal delays a message by at most the broker's maximum sleep or the listener's idle
 * check interval, it never stalls a topic.
 */
public final class WakeUpSignals implements MessageListener {

	private static final Log logger = LogFactory.getLog(WakeUpSignals.class);

	private final Map<String, Runnable> brokers = new ConcurrentHashMap<>();

	private final Map<String, Runnable> listeners = new ConcurrentHashMap<>();

	/**
	 * Routes broker signals of a topic.
	 * @param topic the topic
	 * @param wake what to run on a signal
	 */
	public void onEarlierMessage(String topic, Runnable wake) {
		this.brokers.put(topic, wake);
	}

	/**
	 * Routes ready signals of a topic.
	 * @param topic the topic
	 * @param wake what to run on a signal
	 */
	public void onReadyMessages(String topic, Runnable wake) {
		this.listeners.put(topic, wake);
	}

	/** Forgets every route. */
	public void clear() {
		this.brokers.clear();
		this.listeners.clear();
	}

	@Override
	public void onMessage(Message message, byte[] pattern) {
		signal(new String(message.getBody(), StandardCharsets.UTF_8));
	}

	/**
	 * Passes one signal on; an empty or unknown one is ignored.
	 * @param body the signal: {@code b<topic>} or {@code r<topic>}
	 */
	public void signal(String body) {
		if (body.isEmpty()) {
			return;
		}
		String topic = body.substring(1);
		Runnable wake = switch (body.charAt(0)) {
			case 'b' -> this.brokers.get(topic);
			case 'r' -> this.listeners.get(topic);
			default -> null;
		};
		if (wake != null) {
			if (logger.isTraceEnabled()) {
				logger.trace("Wake-up signal " + body);
			}
			wake.run();
		}
	}

}
