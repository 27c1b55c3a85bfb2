package io.github.delayqueue.runtime;

import java.util.function.Supplier;

import io.github.delayqueue.runtime.broker.TopicBroker;
import io.github.delayqueue.runtime.consumer.TopicConsumer;
import io.github.delayqueue.time.Durations;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One partition of a topic with a listener in this application (the whole topic unless it
 * has several partitions): its broker and its consumer, started and stopped together, and
 * the consumer paused and resumed on its own (the broker keeps moving due messages for
 * the other applications). Pausing stops the consumer like a shutdown; resuming starts a
 * new one, but not while the paused one is still finishing its stop (its handlers may
 * still run): a resume asked meanwhile takes effect once the pause has finished, so that
 * the partition never runs more than its concurrency at once. Stopping and pausing let
 * the consumer go once it claims no more: the caller finishes stopping the consumers of
 * every partition together ({@link ConsumerStop}).
 */
public final class TopicRuntime {

	private static final Log logger = LogFactory.getLog(TopicRuntime.class);

	private final String topic;

	private final TopicBroker broker;

	private final Supplier<TopicConsumer> consumers;

	/** Serializes start, stop, pause and resume; guards the fields below. */
	private final Object lifecycle = new Object();

	private volatile @Nullable TopicConsumer consumer;

	/** The consumer a pause is still stopping, until its stop has ended. */
	private @Nullable TopicConsumer pausing;

	private volatile boolean paused;

	/** A resume asked while the pause was still finishing: done when it has. */
	private boolean resumeWhenPaused;

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
			this.resumeWhenPaused = false;
			startConsumer();
			this.broker.start();
		}
	}

	/**
	 * Stops the broker and the consumer's claiming, and lets the consumer go: the caller
	 * finishes stopping it ({@link TopicConsumer#finishStopping(long, long)}). A pause
	 * still finishing goes on (see {@link #pausing()}), and a resume asked meanwhile is
	 * dropped.
	 * @return the consumer, or {@code null} if there was none (paused)
	 */
	public @Nullable TopicConsumer stop() {
		this.broker.stop();
		synchronized (this.lifecycle) {
			TopicConsumer current = this.consumer;
			this.consumer = null;
			this.paused = false;
			this.resumeWhenPaused = false;
			if (current != null) {
				current.stopClaiming();
			}
			return current;
		}
	}

	/**
	 * Pauses the consumer, like stopping it: it claims no more, and the caller finishes
	 * stopping it ({@link TopicConsumer#finishStopping(long, long)}). Pausing again while
	 * a resume waits for the pause to finish drops the resume.
	 * @return the consumer, or {@code null} if it was paused already
	 */
	public @Nullable TopicConsumer pause() {
		synchronized (this.lifecycle) {
			TopicConsumer current = this.consumer;
			if (this.paused || current == null) {
				this.resumeWhenPaused = false;
				return null;
			}
			this.paused = true;
			this.consumer = null;
			this.pausing = current;
			current.stopClaiming();
			current.stopEnded().thenRun(() -> pauseEnded(current));
			return current;
		}
	}

	/**
	 * @return the consumer a pause is still stopping, or {@code null} if none
	 */
	public @Nullable TopicConsumer pausing() {
		synchronized (this.lifecycle) {
			return this.pausing;
		}
	}

	/**
	 * Resumes a paused consumer: a new one starts claiming at once, or, while the pause
	 * is still finishing (its handlers may still run), as soon as it has.
	 * @return {@code true} if resumed now or once the pause has finished, {@code false}
	 * if it was not paused (or a resume was asked already)
	 */
	public boolean resume() {
		synchronized (this.lifecycle) {
			if (!this.paused || this.resumeWhenPaused) {
				return false;
			}
			TopicConsumer previous = this.pausing;
			if (previous != null) {
				this.resumeWhenPaused = true;
				logger.info("Topic '" + previous.topic() + "': resuming its listener"
						+ ((previous.topic().equals(this.topic)) ? "" : " (partition '" + this.topic + "')")
						+ " once its pause has finished: its handlers may still run, for at most "
						+ Durations.format(previous.shutdownTimeout()) + " from the pause");
				return true;
			}
			this.paused = false;
			startConsumer();
			return true;
		}
	}

	/**
	 * A paused consumer's stop has ended: a resume asked meanwhile starts a new one.
	 */
	private void pauseEnded(TopicConsumer ended) {
		synchronized (this.lifecycle) {
			if (this.pausing != ended) {
				return;
			}
			this.pausing = null;
			if (this.resumeWhenPaused) {
				this.resumeWhenPaused = false;
				this.paused = false;
				startConsumer();
			}
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
	 * @return whether the topic's consumer, if any, and the one a pause is still stopping
	 * have nothing in hand (see {@link TopicConsumer#isIdle()})
	 */
	public boolean isIdle() {
		TopicConsumer current = this.consumer;
		TopicConsumer stopping = pausing();
		return (current == null || current.isIdle()) && (stopping == null || stopping.isIdle());
	}

	/** Wakes the consumer, e.g. because messages became ready. */
	public void wakeConsumer() {
		TopicConsumer current = this.consumer;
		if (current != null) {
			current.wake();
		}
	}

	/**
	 * Tells the consumer what the broker's last promote call read of the ready lists.
	 * @param sentNanos when the call was sent ({@link System#nanoTime()})
	 * @param waiting whether a ready list held an id after the call
	 */
	public void readyListsRead(long sentNanos, boolean waiting) {
		TopicConsumer current = this.consumer;
		if (current != null) {
			current.readyListsRead(sentNanos, waiting);
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
