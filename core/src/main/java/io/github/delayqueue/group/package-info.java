/**
 * Operations on the groups of a topic:
 * {@link io.github.delayqueue.group.DelayQueueGroups} pauses and resumes one group and
 * reads one by name.
 */
@NullMarked
package io.github.delayqueue.group;

import org.jspecify.annotations.NullMarked;
