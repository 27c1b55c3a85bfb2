package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.OutageLog;
import io.github.delayqueue.store.RedisMessageStore;
import io.github.delayqueue.store.StoredMessage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Consumes one topic for one {@link DelayListenerEndpoint}: a fetch thread claims as many ready
 * messages as there are idle handler threads, waiting for a wake-up signal when the topic has
 * nothing ready; each handler thread invokes the listener method and then acknowledges, retries or
 * dead-letters the message.
 */
final class DelayListenerContainer {

	private static final Log logger = LogFactory.getLog(DelayListenerContainer.class);

	private static final long MAX_OUTAGE_BACKOFF_MILLIS = 5_000;

	private static final int STORE_CALL_TRIES = 3;

	private final DelayListenerEndpoint endpoint;

	private final RedisMessageStore store;

	private final PayloadConverter converter;

	private final ListenerSettings settings;

	private final String topic;

	private final Semaphore idleHandlers;

	private final OutageLog outageLog;

	private final Object signal = new Object();

	private boolean signalled;

	private volatile boolean running;

	private @Nullable Thread fetcher;

	private @Nullable ExecutorService handlers;

	DelayListenerContainer(DelayListenerEndpoint endpoint, RedisMessageStore store, PayloadConverter converter) {
		this.endpoint = endpoint;
		this.store = store;
		this.converter = converter;
		this.settings = endpoint.settings();
		this.topic = endpoint.topic();
		this.idleHandlers = new Semaphore(this.settings.concurrency());
		this.outageLog = new OutageLog("listener of topic '" + this.topic + "'");
	}

	void start() {
		this.running = true;
		this.handlers = new ThreadPoolExecutor(this.settings.concurrency(), this.settings.concurrency(), 0,
				TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
				daemonThreads("delay-queue-" + this.topic + "-"));
		Thread thread = new Thread(this::fetchLoop, "delay-queue-" + this.topic + "-fetch");
		thread.setDaemon(true);
		this.fetcher = thread;
		thread.start();
		logger.info("Listening to topic '" + this.topic + "' with " + this.endpoint.describe() + " (concurrency "
				+ this.settings.concurrency() + ", max attempts " + this.settings.maxAttempts() + ")");
	}

	void stop() {
		this.running = false;
		wake();
		Duration timeout = this.settings.shutdownTimeout();
		try {
			if (this.fetcher != null) {
				this.fetcher.join(timeout.toMillis());
			}
			if (this.handlers != null) {
				this.handlers.shutdown();
				if (!this.handlers.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
					logger.warn("Topic '" + this.topic + "': handlers still busy after " + timeout
							+ "; their messages are delivered again when their lease expires");
					this.handlers.shutdownNow();
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	boolean isRunning() {
		return this.running;
	}

	/** Ends the current wait for ready messages, e.g. because a broker made some ready. */
	void wake() {
		synchronized (this.signal) {
			this.signalled = true;
			this.signal.notifyAll();
		}
	}

	private void fetchLoop() {
		long outageBackoff = 0;
		while (this.running) {
			int wanted = acquireIdleHandlers();
			if (wanted == 0) {
				continue;
			}
			List<ClaimedMessage> claimed;
			try {
				claimed = this.store.claim(this.topic, wanted, this.settings.visibilityTimeout());
				this.outageLog.succeeded();
				outageBackoff = 0;
			}
			catch (RuntimeException ex) {
				this.idleHandlers.release(wanted);
				this.outageLog.failed(ex);
				outageBackoff = Math.min(MAX_OUTAGE_BACKOFF_MILLIS, Math.max(100, outageBackoff * 2));
				awaitSignal(outageBackoff);
				continue;
			}
			this.idleHandlers.release(wanted - claimed.size());
			for (ClaimedMessage message : claimed) {
				this.handlers.execute(() -> {
					try {
						handle(message);
					}
					finally {
						this.idleHandlers.release();
					}
				});
			}
			if (claimed.size() < wanted) {
				awaitSignal(this.settings.idleCheckInterval().toMillis());
			}
		}
	}

	private int acquireIdleHandlers() {
		try {
			if (!this.idleHandlers.tryAcquire(this.settings.idleCheckInterval().toMillis(), TimeUnit.MILLISECONDS)) {
				return 0;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.running = false;
			return 0;
		}
		return 1 + this.idleHandlers.drainPermits();
	}

	private void awaitSignal(long timeoutMillis) {
		synchronized (this.signal) {
			if (!this.signalled && this.running) {
				try {
					this.signal.wait(timeoutMillis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					this.running = false;
				}
			}
			this.signalled = false;
		}
	}

	private void handle(ClaimedMessage claimed) {
		StoredMessage message;
		try {
			message = MessageFormat.decode(claimed.id(), claimed.stored());
		}
		catch (CorruptMessageException ex) {
			deadLetter(claimed, "Stored message is corrupt: " + ex.getMessage());
			return;
		}
		int attempt = message.attempts() + 1;
		Object argument;
		try {
			argument = this.endpoint.argument(message, this.converter);
		}
		catch (PayloadConversionException ex) {
			deadLetter(claimed, ex.getMessage());
			return;
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + this.topic + "' message " + claimed.id() + " delivered, attempt " + attempt);
		}
		try {
			this.endpoint.invoke(argument);
		}
		catch (Throwable ex) {
			failed(claimed, attempt, ex);
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			return;
		}
		Boolean acked = callStore(claimed, "acknowledge", () -> this.store.ack(this.topic, claimed));
		if (Boolean.FALSE.equals(acked)) {
			logger.warn("Topic '" + this.topic + "' message " + claimed.id()
					+ " handled, but its lease had expired: it may be delivered again");
		}
		else if (acked != null && logger.isDebugEnabled()) {
			logger.debug("Topic '" + this.topic + "' message " + claimed.id() + " acknowledged");
		}
	}

	private void failed(ClaimedMessage claimed, int attempt, Throwable ex) {
		if (attempt >= this.settings.maxAttempts()) {
			logger.warn("Topic '" + this.topic + "' message " + claimed.id() + " failed on its last attempt (" + attempt
					+ " of " + this.settings.maxAttempts() + "), moving it to the dead-letter set", ex);
			deadLetter(claimed, describe(ex));
			return;
		}
		Duration backoff = this.settings.backoff().after(attempt);
		logger.warn("Topic '" + this.topic + "' message " + claimed.id() + " failed on attempt " + attempt + " of "
				+ this.settings.maxAttempts() + ", retrying in " + backoff + ": " + ex);
		Long due = callStore(claimed, "schedule a retry", () -> this.store.retry(this.topic, claimed, backoff));
		if (due != null && due < 0) {
			logger.warn("Topic '" + this.topic + "' message " + claimed.id()
					+ " could not be scheduled for a retry: its lease had expired");
		}
	}

	private void deadLetter(ClaimedMessage claimed, String error) {
		logger.warn("Topic '" + this.topic + "' message " + claimed.id() + " dead-lettered: " + error);
		Boolean moved = callStore(claimed, "dead-letter", () -> this.store.deadLetter(this.topic, claimed, error));
		if (Boolean.FALSE.equals(moved)) {
			logger.warn("Topic '" + this.topic + "' message " + claimed.id()
					+ " could not be dead-lettered: its lease had expired");
		}
	}

	private <T> @Nullable T callStore(ClaimedMessage claimed, String action, Supplier<T> call) {
		RuntimeException failure = null;
		for (int i = 0; i < STORE_CALL_TRIES; i++) {
			try {
				return call.get();
			}
			catch (RuntimeException ex) {
				failure = ex;
				try {
					Thread.sleep(100L << i);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					break;
				}
			}
		}
		logger.warn("Topic '" + this.topic + "' message " + claimed.id() + ": could not " + action
				+ ", it is delivered again when its lease expires: " + failure);
		return null;
	}

	private static CustomizableThreadFactory daemonThreads(String prefix) {
		CustomizableThreadFactory factory = new CustomizableThreadFactory(prefix);
		factory.setDaemon(true);
		return factory;
	}

	private static String describe(Throwable ex) {
		String text = ex.getClass().getName() + ((ex.getMessage() != null) ? ": " + ex.getMessage() : "");
		return (text.length() > 2000) ? text.substring(0, 2000) : text;
	}

}
