/**
 * Micrometer Observation support: a producer observation on send and a consumer
 * observation around each listener call, with the trace context carried in the message
 * headers across the delay.
 */
@NullMarked
package io.github.delayqueue.observation;

import org.jspecify.annotations.NullMarked;
