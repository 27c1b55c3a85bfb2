package io.github.delayqueue.store;

import java.time.Duration;
import java.util.List;

/**
 * The outcome of one claim call.
 *
 * @param messages the messages leased to the caller, possibly none
 * @param more whether the call stopped after looking at its most ids, with more possibly
 * ready behind them: the caller should claim again at once rather than wait
 * @param rateLimitedFor when the claim used up the room of the topic's rate limit, how
 * long until its window has room again (the caller should claim again only then); zero
 * otherwise
 */
public record ClaimResult(List<ClaimedMessage> messages, boolean more, Duration rateLimitedFor) {

	/**
	 * The outcome of a claim that no rate limit held back.
	 * @param messages the messages leased to the caller, possibly none
	 * @param more whether more may be ready
	 */
	public ClaimResult(List<ClaimedMessage> messages, boolean more) {
		this(messages, more, Duration.ZERO);
	}

}
