package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Predicate;

import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Runs {@link ScriptCodec script calls} on partitions: names their keys under the prefix,
 * puts the clock and the signal channel in front, bounds every wait by the store's
 * timeout, and reads each reply through its codec. Thread-safe.
 */
final class ScriptCalls {

	/**
	 * The most handled ids with a deduplication window a partition remembers by default.
	 */
	static final int DEFAULT_MAX_REMEMBERED = 100_000;

	private final ScriptRunner runner;

	private final ScriptClock clock;

	private final String prefix;

	private final String channel;

	private final Duration timeout;

	private volatile boolean shardedSignals;

	private volatile int maxRemembered = DEFAULT_MAX_REMEMBERED;

	ScriptCalls(RedisConnectionFactory connectionFactory, String prefix, Duration timeout, ScriptClock clock) {
		this.runner = new ScriptRunner(connectionFactory);
		this.clock = clock;
		this.prefix = prefix;
		this.channel = TopicKeys.signalChannel(prefix);
		this.timeout = timeout;
	}

	String prefix() {
		return this.prefix;
	}

	Duration timeout() {
		return this.timeout;
	}

	ScriptClock clock() {
		return this.clock;
	}

	/** When a call that starts now must be done: the store's timeout from now. */
	long deadline() {
		return System.nanoTime() + this.timeout.toNanos();
	}

	/**
	 * Sets the most ids of handled messages sent with a deduplication window that a
	 * partition remembers.
	 * @param maxRemembered the most ids, at least 1
	 */
	void rememberAtMost(int maxRemembered) {
		this.maxRemembered = maxRemembered;
	}

	/**
	 * @return the most handled ids with a deduplication window a partition remembers
	 */
	int maxRemembered() {
		return this.maxRemembered;
	}

	/** Makes the scripts send signals with {@code SPUBLISH} on each topic's channel. */
	void useShardedSignals() {
		this.shardedSignals = true;
	}

	boolean shardedSignals() {
		return this.shardedSignals;
	}

	/**
	 * @return the partition's own channel with sharded signals, else the prefix's
	 */
	String signalChannel(String partition) {
		return this.shardedSignals ? TopicKeys.shardedSignalChannel(this.prefix, partition) : this.channel;
	}

	/**
	 * @return the prefix's channel, on which unsharded signals go
	 */
	String signalChannel() {
		return this.channel;
	}

	TopicKeys keys(String partition) {
		return new TopicKeys(this.prefix, partition);
	}

	/**
	 * Sends a call without waiting for its reply; the future completes on the Redis
	 * client's I/O thread, where nothing may block.
	 */
	<R> CompletableFuture<R> submit(String partition, ScriptCodec<R> codec) {
		return this.runner.submit(call(partition, codec), this.timeout).thenApply(codec::read);
	}

	/**
	 * Sends a call made by {@link #call(String, ScriptCodec)} without waiting for its
	 * reply, longer than a given time, to be read by its codec; the future completes on
	 * the Redis client's I/O thread, where nothing may block.
	 */
	CompletableFuture<Object> submit(ScriptCall call, Duration timeout) {
		return this.runner.submit(call, timeout);
	}

	/**
	 * Sends a call as {@link #submit(ScriptCall, Duration)} does, but only by the
	 * script's digest: if Redis lost the script, the future fails with its
	 * {@code NOSCRIPT} error.
	 * @see ScriptRunner#submitOnce(ScriptCall, Duration)
	 */
	CompletableFuture<Object> submitOnce(ScriptCall call, Duration timeout) {
		return this.runner.submitOnce(call, timeout);
	}

	/**
	 * Sends a call as {@link #submit(ScriptCall, Duration)} does, with the script in full
	 * ({@code EVAL}).
	 * @see ScriptRunner#submitInFull(ScriptCall, Duration)
	 */
	CompletableFuture<Object> submitInFull(ScriptCall call, Duration timeout) {
		return this.runner.submitInFull(call, timeout);
	}

	/**
	 * Sends a call that names a consumer's claim record, writing it only through a gate.
	 */
	<R> CompletableFuture<R> submit(String partition, String consumer, ScriptCodec<R> codec, WriteGate gate) {
		return this.runner.submit(call(codec, consumerKeys(partition, consumer)), this.timeout, gate)
			.thenApply(codec::read);
	}

	/**
	 * Sends a call in full ({@code EVAL}), so that it runs even if its reply is never
	 * read; the future completes on the Redis client's I/O thread.
	 */
	<R> CompletableFuture<R> submitInFull(String partition, ScriptCodec<R> codec) {
		return this.runner.submitInFull(call(partition, codec), this.timeout).thenApply(codec::read);
	}

	/**
	 * Sends a call that names a consumer's claim record in full ({@code EVAL}), so that
	 * it runs even if its reply is never read.
	 */
	<R> CompletableFuture<R> submitInFull(String partition, String consumer, ScriptCodec<R> codec) {
		return this.runner.submitInFull(call(codec, consumerKeys(partition, consumer)), this.timeout)
			.thenApply(codec::read);
	}

	/** Runs a call, waiting for its reply at most the store's timeout. */
	<R> R run(String partition, ScriptCodec<R> codec) {
		return run(partition, codec, this.timeout);
	}

	/** Runs a call, waiting for its reply at most a given time. */
	<R> R run(String partition, ScriptCodec<R> codec, Duration timeout) {
		return run(codec, keys(partition)::key, timeout);
	}

	/**
	 * Runs a call sent in full ({@code EVAL}), waiting for its reply at most the store's
	 * timeout: it runs even if the wait is cut short.
	 * @see ScriptRunner#runInFull(ScriptCall, Duration)
	 */
	<R> R runInFull(String partition, ScriptCodec<R> codec) {
		return codec.read(this.runner.runInFull(call(partition, codec), this.timeout));
	}

	/** Runs a call whose keys are named one by one, waiting at most a given time. */
	<R> R run(ScriptCodec<R> codec, Function<Script.Key, String> keys, Duration timeout) {
		return codec.read(this.runner.run(call(codec, keys), timeout));
	}

	/** A call on a partition, to run with others. */
	ScriptCall call(String partition, ScriptCodec<?> codec) {
		return call(codec, keys(partition)::key);
	}

	/**
	 * Runs calls, all sent before the first reply is awaited.
	 * @return their replies, in order, to be read by their codecs
	 */
	List<Object> runAll(List<ScriptCall> calls, Duration timeout) {
		return this.runner.runAll(calls, timeout);
	}

	/**
	 * Runs calls as {@link #runAll(List, Duration)} does; a call that fails as
	 * {@code kept} says has its failure in its place, and the others go on.
	 */
	List<Object> runAll(List<ScriptCall> calls, Duration timeout, Predicate<Throwable> kept) {
		return this.runner.runAll(calls, timeout, kept);
	}

	/**
	 * Waits for a call sent with {@link #submit}; its own timeout bounds the wait.
	 * @param call the call
	 * @return its reply, read
	 */
	static <T> T await(CompletableFuture<T> call) {
		try {
			return call.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	ScriptCall call(ScriptCodec<?> codec, Function<Script.Key, String> keys) {
		return this.clock.call(codec.script(), keys, codec.arguments(), this.shardedSignals);
	}

	/** The keys of a partition, with the claim record of one consumer. */
	private Function<Script.Key, String> consumerKeys(String partition, String consumer) {
		TopicKeys keys = keys(partition);
		return (role) -> (role == Script.Key.CLAIM_RECORD) ? keys.claimRecord(consumer) : keys.key(role);
	}

}
