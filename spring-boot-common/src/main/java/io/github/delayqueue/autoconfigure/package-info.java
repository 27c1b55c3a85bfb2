/**
 * Spring Boot auto-configuration and {@code delay-queue.*} configuration properties.
 */
@NullMarked
package io.github.delayqueue.autoconfigure;

import org.jspecify.annotations.NullMarked;
