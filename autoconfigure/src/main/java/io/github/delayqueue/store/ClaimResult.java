package io.github.delayqueue.store;

import java.util.List;

/**
 * The outcome of one claim call.
 *
 * @param messages the messages leased to the caller, possibly none
 * @param more whether the call stopped after looking at its most ids, with more possibly
 * ready behind them: the caller should claim again at once rather than wait
 */
public record ClaimResult(List<ClaimedMessage> messages, boolean more) {
}
