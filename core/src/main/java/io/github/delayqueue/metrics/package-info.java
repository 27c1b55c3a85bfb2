/**
 * Metrics: the {@link io.github.delayqueue.metrics.DelayQueueMetrics} events the queue
 * reports, free of any metrics library, and their Micrometer adapter.
 */
@NullMarked
package io.github.delayqueue.metrics;

import org.jspecify.annotations.NullMarked;
