/**
 * Conversion of payloads to and from the bytes stored in Redis.
 */
@NullMarked
package io.github.delayqueue.convert;

import org.jspecify.annotations.NullMarked;
