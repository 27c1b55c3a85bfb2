package io.github.delayqueue.runtime.consumer;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * How many messages a claim asks for: as many as the consumer has free slots (the handler
 * slots, {@code concurrency} or {@code concurrency × maxBatchSize} for a batch listener,
 * plus the prefetch of the moment, see {@link AdaptivePrefetch}), at most
 * {@value #MAX_CLAIM} due ones, and as many not yet due ones as the held messages have
 * room for, at most {@value #MAX_CLAIM} too; none for a rate-limited topic, so that a
 * delivery starts when its claim takes its place in the limit's window. Counts the
 * messages claimed and not yet finished that hold a slot. Thread-safe.
 */
final class ClaimSlots {

	/**
	 * Most due messages one claim asks for, and most not yet due ones: a claim of more
	 * keeps Redis busy for milliseconds (about 5 µs a message), and the next claim
	 * follows at once while they keep coming.
	 */
	static final int MAX_CLAIM = 256;

	private final int handlerSlots;

	private final AdaptivePrefetch prefetch;

	private final boolean rateLimited;

	private final IntSupplier held;

	/**
	 * Messages claimed and not yet finished that hold a slot; only raised by the claim
	 * being prepared, of which there is one at a time.
	 */
	private final AtomicInteger inHand = new AtomicInteger();

	/**
	 * Creates the slots of a consumer.
	 * @param handlerSlots how many messages its handlers take at once
	 * @param prefetch how many claimed messages may wait for a free handler besides
	 * those, at the moment of each claim
	 * @param rateLimited whether the topic has a rate limit or a group concurrency: its
	 * claims take nothing early
	 * @param held how many messages are held until their due time
	 */
	ClaimSlots(int handlerSlots, AdaptivePrefetch prefetch, boolean rateLimited, IntSupplier held) {
		this.handlerSlots = handlerSlots;
		this.prefetch = prefetch;
		this.rateLimited = rateLimited;
		this.held = held;
	}

	/**
	 * Takes the free slots for a claim: they are in hand until {@link #claimed} or
	 * {@link #giveBack}.
	 * @return how many due messages the claim asks for; 0 when no slot is free
	 */
	int take() {
		int free = this.handlerSlots + this.prefetch.current() - this.inHand.get();
		if (free <= 0) {
			return 0;
		}
		int wanted = Math.min(MAX_CLAIM, free);
		this.inHand.addAndGet(wanted);
		return wanted;
	}

	/**
	 * @return how many messages not yet due the claim may take
	 */
	int earlyLimit() {
		return this.rateLimited ? 0 : Math.min(MAX_CLAIM, Math.max(0, EarlyMessages.MAX_HELD - this.held.getAsInt()));
	}

	/**
	 * A claim answered: the slots it took and did not fill are free again.
	 * @param wanted how many due messages it asked for
	 * @param due how many it got
	 */
	void claimed(int wanted, int due) {
		this.inHand.addAndGet(due - wanted);
	}

	/**
	 * Takes slots that no message holds: the room a batch listener's running batch left,
	 * which no claim may fill while the batch runs. Given back with {@link #giveBack}.
	 * @param count how many
	 */
	void reserve(int count) {
		this.inHand.addAndGet(count);
	}

	/**
	 * Gives back slots taken for a claim not sent, or freed by a handler.
	 * @param count how many
	 */
	void giveBack(int count) {
		this.inHand.addAndGet(-count);
	}

}
