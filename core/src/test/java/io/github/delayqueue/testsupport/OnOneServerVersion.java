package io.github.delayqueue.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;

/**
 * Marks a test class of the engine that runs on one Redis server, the {@code PATH}'s
 * (7.x), and not again on the shipped Redis 6.2 (the {@code redis-6.2} execution of
 * {@code core/pom.xml}, whose {@code excludedGroups} names {@value #TAG}). The rule: what
 * the class tests is the client's (orders, latencies, timeouts, replies sent again, where
 * calls are written from), or it drives the scripts end to end or in an adversarial
 * review while the script tests and the model-based tests run those scripts on both
 * servers. A class whose outcome can depend on what the server does with a command stays
 * unmarked.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Tag(OnOneServerVersion.TAG)
public @interface OnOneServerVersion {

	/**
	 * The JUnit tag, named in the {@code excludedGroups} of the {@code redis-6.2}
	 * execution.
	 */
	String TAG = "one-server-version";

}
