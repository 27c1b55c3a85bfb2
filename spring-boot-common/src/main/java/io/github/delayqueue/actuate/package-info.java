/**
 * Operations support with Spring Boot Actuator: the {@code delayqueue} endpoint, which
 * shows and manages topics and messages, and the {@code delayQueue} health contributor.
 */
@NullMarked
package io.github.delayqueue.actuate;

import org.jspecify.annotations.NullMarked;
