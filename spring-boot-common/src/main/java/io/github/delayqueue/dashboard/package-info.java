/**
 * The operators' web dashboard, served by the application itself: a page from the jar and
 * its JSON, read through the operations of the {@code delayqueue} endpoint and under the
 * same access rules.
 */
@NullMarked
package io.github.delayqueue.dashboard;

import org.jspecify.annotations.NullMarked;
