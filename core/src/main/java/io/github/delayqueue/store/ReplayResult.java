package io.github.delayqueue.store;

import java.util.List;

/**
 * The outcome of one replay call.
 *
 * @param replayed ids moved from the dead-letter set back to the schedule, due at once
 * @param skipped ids looked at but left dead (sent anew under the same id, unreadable, or
 * not found)
 */
public record ReplayResult(List<String> replayed, int skipped) {
}
