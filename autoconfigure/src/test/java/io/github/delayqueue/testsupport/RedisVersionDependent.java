package io.github.delayqueue.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;

/**
 * Marks a test class whose outcome can depend on the version of the Redis server: it
 * reads what the server reports ({@code INFO}, {@code CONFIG}), or exercises replication,
 * Sentinel, Cluster (sharded signals since Redis 7) or scripts configured only here. The
 * build runs the whole suite on the {@code PATH}'s Redis (7.x) and only these classes
 * again on the shipped Redis 6.2 (the {@code redis-6.2} execution of
 * {@code autoconfigure/pom.xml}, whose {@code groups} names {@value #TAG}): the scripts
 * and the runtime run on both versions in {@code core}'s own tests, and the wiring does
 * not depend on the server's version.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Tag(RedisVersionDependent.TAG)
public @interface RedisVersionDependent {

	/** The JUnit tag, named in the {@code groups} of the {@code redis-6.2} execution. */
	String TAG = "redis-versions";

}
