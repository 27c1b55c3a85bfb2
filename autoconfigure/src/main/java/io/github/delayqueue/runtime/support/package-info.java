/**
 * Helpers of the runtime: outage logging and the repair of keys of the wrong type.
 */
@NullMarked
package io.github.delayqueue.runtime.support;

import org.jspecify.annotations.NullMarked;
