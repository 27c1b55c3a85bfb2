package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Sets a partition's counts of messages in flight per group right, every
 * {@link #INTERVAL}, for a listener with a group concurrency: a count that drifted (a
 * group's entry lost while its message was in flight, the counts lost) would otherwise
 * hold its group back, or let it past its limit, for good. Names at WARN every group it
 * corrects. Each call runs on the shared scheduler and does not wait for Redis.
 */
final class GroupSlotsRecount {

	/** How often the counts are set right. */
	static final Duration INTERVAL = Duration.ofSeconds(30);

	private static final Log logger = LogFactory.getLog(GroupSlotsRecount.class);

	private final String topic;

	private final TopicStore store;

	private final ScheduledExecutorService scheduler;

	private @Nullable ScheduledFuture<?> next;

	GroupSlotsRecount(String topic, TopicStore store, ScheduledExecutorService scheduler) {
		this.topic = topic;
		this.store = store;
		this.scheduler = scheduler;
	}

	/** Recounts every {@link #INTERVAL} from one interval on. */
	synchronized void start() {
		long millis = INTERVAL.toMillis();
		this.next = this.scheduler.scheduleWithFixedDelay(this::recount, millis, millis, TimeUnit.MILLISECONDS);
	}

	/** Recounts no more. */
	synchronized void stop() {
		if (this.next != null) {
			this.next.cancel(false);
			this.next = null;
		}
	}

	private void recount() {
		try {
			this.store.recountGroupSlots().whenComplete(this::recounted);
		}
		catch (RuntimeException ex) {
			recounted(null, ex);
		}
	}

	private void recounted(@Nullable List<String> corrected, @Nullable Throwable failure) {
		if (failure != null) {
			logger.debug("Topic '" + this.topic + "': recounting the group slots failed, trying again in " + INTERVAL,
					failure);
		}
		else if (corrected != null && !corrected.isEmpty()) {
			logger.warn("Topic '" + this.topic + "': messages in flight per group were counted wrong, set right from "
					+ "the messages in flight (group: counted -> in flight): " + corrected);
		}
	}

}
