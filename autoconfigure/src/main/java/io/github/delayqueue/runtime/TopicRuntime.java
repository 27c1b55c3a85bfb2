package io.github.delayqueue.runtime;

import java.util.function.Supplier;

import io.github.delayqueue.runtime.broker.TopicBroker;
import io.github.delayqueue.runtime.consumer.TopicConsumer;
import org.jspecify.annotations.Nullable;

/**
 * One partition of a topic with a listener in this application (the whole topic unless it
 * has several partitions): its broker and its consumer, started and stopped together, and
 * the consumer paused and resumed on its own (the broker keeps moving due messages for
 * the other applications). Pausing stops the consumer like a shutdown; resuming starts a
 * new one.
 */
public final class TopicRuntime {

	private final String topic;

	private final TopicBroker broker;

	private final Supplier<TopicConsumer> consumers;

	/** Serializes start, stop, pause and resume, which may wait for handlers. */
	private final Object lifecycle = new Object();

	private volatile @Nullable TopicConsumer consumer;

	private volatile boolean paused;

	/**
	 * Creates a partition's runtime.
	 * @param topic the partition's name in Redis
	 * @param broker its broker
	 * @param consumers makes a new consumer for the topic
	 */
	public TopicRuntime(String topic, TopicBroker broker, Supplier<TopicConsumer> consumers) {
		this.topic = topic;
		this.broker = broker;
		this.consumers = consumers;
	}

	/**
	 * @return the topic
	 */
	public String topic() {
		return this.topic;
	}

	/** Starts the broker and a consumer. */
	public void start() {
		synchronized (this.lifecycle) {
			this.paused = false;
			startConsumer();
			this.broker.start();
		}
	}

	/** First half of stopping: the broker stops, and the consumer claims no more. */
	public void stopClaiming() {
		this.broker.stop();
		TopicConsumer current = this.consumer;
		if (current != null) {
			current.stopClaiming();
		}
	}

	/**
	 * Second half of stopping: running handlers finish until the deadline, what is
	 * unfinished is handed back.
	 * @param deadlineNanos the {@link System#nanoTime()} by which to be done
	 */
	public void finishStopping(long deadlineNanos) {
		synchronized (this.lifecycle) {
			TopicConsumer current = this.consumer;
			this.consumer = null;
			this.paused = false;
			if (current != null) {
				current.finishStopping(deadlineNanos);
			}
		}
	}

	/**
	 * @return how long stopping waits for running handlers
	 */
	public long shutdownTimeoutNanos() {
		TopicConsumer current = this.consumer;
		return (current != null) ? current.shutdownTimeout().toNanos() : 0;
	}

	/**
	 * Pauses the consumer, like stopping it; returns once it has stopped.
	 * @return {@code true} if paused now, {@code false} if it was paused already
	 */
	public boolean pause() {
		synchronized (this.lifecycle) {
			TopicConsumer current = this.consumer;
			if (this.paused || current == null) {
				return false;
			}
			this.paused = true;
			this.consumer = null;
			current.stopClaiming();
			current.finishStopping(System.nanoTime() + current.shutdownTimeout().toNanos());
			return true;
		}
	}

	/**
	 * Resumes a paused consumer: a new one starts claiming at once.
	 * @return {@code true} if resumed now, {@code false} if it was not paused
	 */
	public boolean resume() {
		synchronized (this.lifecycle) {
			if (!this.paused) {
				return false;
			}
			this.paused = false;
			startConsumer();
			return true;
		}
	}

	/**
	 * @return what the topic's listener is doing
	 */
	public ListenerState state() {
		if (this.paused) {
			return ListenerState.PAUSED;
		}
		TopicConsumer current = this.consumer;
		return (current != null && current.isAlive()) ? ListenerState.RUNNING : ListenerState.STOPPED;
	}

	/**
	 * @return whether the topic's consumer, if any, has nothing in hand (see
	 * {@link TopicConsumer#isIdle()})
	 */
	public boolean isIdle() {
		TopicConsumer current = this.consumer;
		return current == null || current.isIdle();
	}

	/** Wakes the consumer, e.g. because messages became ready. */
	public void wakeConsumer() {
		TopicConsumer current = this.consumer;
		if (current != null) {
			current.wake();
		}
	}

	/** Wakes the broker, e.g. because a message earlier than its next one was sent. */
	public void wakeBroker() {
		this.broker.wake();
	}

	private void startConsumer() {
		TopicConsumer started = this.consumers.get();
		this.consumer = started;
		started.start();
	}

}
