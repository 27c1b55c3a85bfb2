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
 * @param groupPauseEndsIn when nothing more is waiting now but a group's pause ends
 * later, how long until the first one ends (the caller may claim again then); zero
 * otherwise
 */
public record ClaimResult(List<ClaimedMessage> messages, boolean more, Duration rateLimitedFor,
		Duration groupPauseEndsIn) {

	/**
	 * The outcome of a claim that names no group pause to end.
	 * @param messages the messages leased to the caller, possibly none
	 * @param more whether more may be ready
	 * @param rateLimitedFor how long the rate limit holds the rest back, or zero
	 */
	public ClaimResult(List<ClaimedMessage> messages, boolean more, Duration rateLimitedFor) {
		this(messages, more, rateLimitedFor, Duration.ZERO);
	}

	/**
	 * The outcome of a claim that no rate limit held back.
	 * @param messages the messages leased to the caller, possibly none
	 * @param more whether more may be ready
	 */
	public ClaimResult(List<ClaimedMessage> messages, boolean more) {
		this(messages, more, Duration.ZERO);
	}

}
