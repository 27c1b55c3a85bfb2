/**
 * Debian's headless Chromium for the dashboard's browser tests.
 */
@NullMarked
package io.github.delayqueue.test.browser;

import org.jspecify.annotations.NullMarked;
