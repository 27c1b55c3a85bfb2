package io.github.delayqueue.runtime.consumer;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

import io.github.delayqueue.runtime.consumer.Settlement.HandBack;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.TopicStore;

/**
 * The settlement's hand-back, for the reviews in another package: hands back claimed
 * messages as a stopping consumer does (not yet handled).
 */
public final class HandBacks {

	private HandBacks() {
	}

	/**
	 * @param topic the topic
	 * @param store the topic's store
	 * @param claimed the messages, as claimed
	 * @param scheduler the acknowledgements' scheduler
	 * @param unfinished whether their handlers were cut off (a WARN names them) rather
	 * than not started
	 * @return completes once the hand-back (with its retries) ended
	 */
	public static CompletableFuture<Void> handBack(String topic, TopicStore store, List<ClaimedMessage> claimed,
			ScheduledExecutorService scheduler, boolean unfinished) {
		Settlement settlement = new Settlement(topic, store, new AckBatcher(topic, store, scheduler));
		return settlement.handBack(claimed.stream().map(InFlightMessage::new).toList(),
				unfinished ? HandBack.UNFINISHED : HandBack.NOT_STARTED);
	}

}
