/**
 * Durations as people write them, for messages and logs.
 */
@NullMarked
package io.github.delayqueue.time;

import org.jspecify.annotations.NullMarked;
