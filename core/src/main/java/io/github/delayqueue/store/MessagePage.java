package io.github.delayqueue.store;

import java.util.List;

/**
 * One page of a topic's messages in one state.
 *
 * @param total entries of the state's index (for the ready list its length, which may
 * include ids that claim will drop)
 * @param messages the messages of the page, oldest first
 */
public record MessagePage(long total, List<MessageSummary> messages) {
}
