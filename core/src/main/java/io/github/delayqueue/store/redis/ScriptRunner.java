package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.time.Durations;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs script calls and waits for their replies at most a given time, whatever the Redis
 * client's own command timeout is. On Lettuce the calls go out on the asynchronous API,
 * all written before the first reply is awaited (so a batch of calls costs one round
 * trip), and a call that times out is cancelled, so that the client does not send it
 * again after a reconnect. A script missing from the server's cache (a restart, a
 * failover, another cluster node) is sent again in full, only for the calls that missed
 * it, within the same timeout and cancelled like the first command.
 */
final class ScriptRunner {

	private static final LettuceExceptionConverter LETTUCE_EXCEPTIONS = new LettuceExceptionConverter();

	/** No failure takes the place of a reply: every one is thrown. */
	private static final Predicate<Throwable> NONE_KEPT = (failure) -> false;

	private final RedisConnectionFactory connectionFactory;

	ScriptRunner(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Runs one script call.
	 * @param call the call
	 * @param timeout the longest wait for its reply
	 * @return the reply: a {@code Long}, or a {@code List} of {@code Long},
	 * {@code byte[]} and nulls
	 */
	Object run(ScriptCall call, Duration timeout) {
		return runAll(List.of(call), timeout).get(0);
	}

	/**
	 * Sends one script call without waiting for its reply. The future completes on the
	 * Redis client's I/O thread: whoever continues from it must not block there.
	 * @param call the call
	 * @param timeout the longest wait for its reply: the future then fails with a
	 * {@link QueryTimeoutException} and the call is cancelled
	 * @return the reply: a {@code Long}, or a {@code List} of {@code Long},
	 * {@code byte[]} and nulls; or a failure with a {@link DataAccessException}
	 */
	CompletableFuture<Object> submit(ScriptCall call, Duration timeout) {
		return submit(call, timeout, Sending.BY_DIGEST, WriteGate.OPEN);
	}

	/**
	 * Sends one script call by its digest ({@code EVALSHA}) as
	 * {@link #submit(ScriptCall, Duration)} does, but does not send it again in full if
	 * Redis lost the script: the future then fails with the {@code NOSCRIPT} error (see
	 * {@link #isNoScript(Throwable)}), and the caller decides when to send it again.
	 * @param call the call
	 * @param timeout the longest wait for its reply
	 * @return the reply, or a failure with a {@link DataAccessException}
	 */
	CompletableFuture<Object> submitOnce(ScriptCall call, Duration timeout) {
		return submit(call, timeout, Sending.BY_DIGEST_ONCE, WriteGate.OPEN);
	}

	/**
	 * Sends one script call as {@link #submit(ScriptCall, Duration)} does, writing it,
	 * and the script in full if Redis lost it, only through a gate.
	 * @param call the call
	 * @param timeout the longest wait for its reply
	 * @param gate lets the call be written, first and after {@code NOSCRIPT}; when it
	 * does not, the future fails
	 * @return the reply, or a failure with a {@link DataAccessException}
	 */
	CompletableFuture<Object> submit(ScriptCall call, Duration timeout, WriteGate gate) {
		return submit(call, timeout, Sending.BY_DIGEST, gate);
	}

	/**
	 * Sends one script call in full ({@code EVAL}), without waiting for its reply, so
	 * that it runs even if its reply is never read: a call by its digest
	 * ({@code EVALSHA}) that finds the script missing from the server's cache would need
	 * a second round trip, which a connection closed meanwhile never makes. On the shared
	 * connection of Lettuce it runs after every call sent before it. The future completes
	 * on the Redis client's I/O thread: whoever continues from it must not block there.
	 * @param call the call
	 * @param timeout the longest wait for its reply: the future then fails with a
	 * {@link QueryTimeoutException} and the call is cancelled
	 * @return the reply, as {@link #submit(ScriptCall, Duration)} gives it
	 */
	CompletableFuture<Object> submitInFull(ScriptCall call, Duration timeout) {
		return submit(call, timeout, Sending.IN_FULL, WriteGate.OPEN);
	}

	/**
	 * Runs one script call sent in full ({@code EVAL}), waiting for its reply at most a
	 * given time: Redis runs it as it arrives, even if the wait is cut short by an
	 * interrupt or the connection closes before the reply, as it needs no second round
	 * trip after a {@code NOSCRIPT}.
	 * @param call the call
	 * @param timeout the longest wait for its reply
	 * @return the reply, as {@link #run(ScriptCall, Duration)} gives it
	 * @throws QueryTimeoutException if Redis did not answer in time, or the thread was
	 * interrupted while waiting (the call may have run)
	 * @throws DataAccessException if the call failed
	 */
	Object runInFull(ScriptCall call, Duration timeout) {
		CompletableFuture<Object> reply = submitInFull(call, timeout);
		try {
			// Bounded by the timeout of the call itself.
			return reply.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException("Interrupted while waiting for Redis (the call may have run)", ex);
		}
		catch (ExecutionException ex) {
			throw translate(ex.getCause());
		}
	}

	private CompletableFuture<Object> submit(ScriptCall call, Duration timeout, Sending sending, WriteGate gate) {
		RedisConnection connection;
		try {
			connection = this.connectionFactory.getConnection();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (!(connection.getNativeConnection() instanceof RedisClusterAsyncCommands<?, ?> commands)) {
			try (connection) {
				return CompletableFuture.completedFuture(runBlocking(connection, call));
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> async = (RedisClusterAsyncCommands<byte[], byte[]>) commands;
		CompletableFuture<Object> reply = new CompletableFuture<>();
		// The command on its way: EVALSHA, then EVAL if the script was missing.
		AtomicReference<RedisFuture<Object>> sent = new AtomicReference<>();
		boolean written = gate.write(() -> sent.set((sending == Sending.IN_FULL)
				? async.eval(call.script().getScriptAsString().getBytes(StandardCharsets.UTF_8), outputType(call),
						call.keyBytes(), call.argBytes())
				: async.evalsha(call.script().getSha1(), outputType(call), call.keyBytes(), call.argBytes())));
		if (!written) {
			connection.close();
			return CompletableFuture.failedFuture(new RedisSystemException("The call was not sent: its gate is closed",
					new IllegalStateException("Gate closed")));
		}
		sent.get().whenComplete((value, failure) -> {
			if (failure != null && sending == Sending.BY_DIGEST && isNoScript(failure) && !reply.isDone()) {
				boolean again = gate.write(() -> {
					RedisFuture<Object> inFullAgain = async.eval(
							call.script().getScriptAsString().getBytes(StandardCharsets.UTF_8), outputType(call),
							call.keyBytes(), call.argBytes());
					sent.set(inFullAgain);
					if (reply.isDone()) {
						// Timed out while it was being sent.
						inFullAgain.cancel(true);
					}
					inFullAgain.whenComplete((result, againFailure) -> complete(reply, result, againFailure));
				});
				if (!again) {
					complete(reply, null, new RedisSystemException(
							"The script was missing from Redis and the call was not sent again: its gate is closed",
							failure));
				}
			}
			else {
				complete(reply, value, failure);
			}
		});
		reply.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((value, failure) -> {
			connection.close();
			if (failure instanceof TimeoutException) {
				sent.get().cancel(true);
			}
		});
		return reply.exceptionally((failure) -> {
			Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
			throw (cause instanceof TimeoutException) ? new QueryTimeoutException("Redis did not answer within "
					+ Durations.format(timeout) + " (the call may still have run on the server)", cause)
					: translate(cause);
		});
	}

	private static void complete(CompletableFuture<Object> reply, @Nullable Object value, @Nullable Throwable failure) {
		if (failure != null) {
			reply.completeExceptionally(failure);
		}
		else if (value == null) {
			reply.completeExceptionally(new RedisSystemException("Redis returned no reply to a script call", null));
		}
		else {
			reply.complete(value);
		}
	}

	/**
	 * Runs script calls, sending them all before waiting for the first reply.
	 * @param calls the calls
	 * @param timeout the longest wait for all replies
	 * @return the replies, in the order of the calls
	 * @throws QueryTimeoutException if Redis did not answer them all in time (some may
	 * have run)
	 * @throws DataAccessException if a call failed (the others may have run)
	 */
	List<Object> runAll(List<ScriptCall> calls, Duration timeout) {
		return runAll(calls, timeout, NONE_KEPT);
	}

	/**
	 * Runs script calls, sending them all before waiting for the first reply; the calls
	 * that fail in a given way do not stop the others.
	 * @param calls the calls
	 * @param timeout the longest wait for all replies
	 * @param kept which failures of a call take the place of its reply, as the
	 * {@link DataAccessException} itself, instead of being thrown
	 * @return the replies, in the order of the calls
	 * @throws QueryTimeoutException if Redis did not answer them all in time (some may
	 * have run)
	 * @throws DataAccessException if a call failed otherwise (the others may have run)
	 */
	List<Object> runAll(List<ScriptCall> calls, Duration timeout, Predicate<Throwable> kept) {
		long deadline = System.nanoTime() + timeout.toNanos();
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			if (connection.getNativeConnection() instanceof RedisClusterAsyncCommands<?, ?> commands) {
				@SuppressWarnings("unchecked")
				RedisClusterAsyncCommands<byte[], byte[]> async = (RedisClusterAsyncCommands<byte[], byte[]>) commands;
				return runAsync(Collections.nCopies(calls.size(), async), calls, deadline, timeout, kept);
			}
			List<Object> replies = new ArrayList<>(calls.size());
			for (ScriptCall call : calls) {
				try {
					replies.add(runBlocking(connection, call));
				}
				catch (DataAccessException ex) {
					if (!kept.test(ex)) {
						throw ex;
					}
					replies.add(ex);
				}
			}
			return replies;
		}
	}

	/**
	 * Runs script calls on Lettuce's asynchronous API, all sent before the first reply is
	 * awaited.
	 * @param commands the connection's asynchronous commands
	 * @param calls the calls
	 * @param deadline the {@link System#nanoTime()} by which all replies must be in
	 * @param timeout the whole wait, for the exception's message
	 * @return the replies, in the order of the calls
	 */
	static List<Object> runAsync(RedisClusterAsyncCommands<byte[], byte[]> commands, List<ScriptCall> calls,
			long deadline, Duration timeout) {
		return runAsync(Collections.nCopies(calls.size(), commands), calls, deadline, timeout, NONE_KEPT);
	}

	/**
	 * Runs script calls on Lettuce's asynchronous API, each on its own connection (a
	 * Cluster node's), all sent before the first reply is awaited.
	 * @param commandsOfCalls the asynchronous commands of the connection of each call
	 * @param calls the calls
	 * @param deadline the {@link System#nanoTime()} by which all replies must be in
	 * @param timeout the whole wait, for the exception's message
	 * @param kept which failures of a call take the place of its reply instead of being
	 * thrown
	 * @return the replies, in the order of the calls
	 */
	static List<Object> runAsync(List<RedisClusterAsyncCommands<byte[], byte[]>> commandsOfCalls,
			List<ScriptCall> calls, long deadline, Duration timeout, Predicate<Throwable> kept) {
		List<RedisFuture<Object>> futures = new ArrayList<>(calls.size());
		for (int i = 0; i < calls.size(); i++) {
			ScriptCall call = calls.get(i);
			futures.add(commandsOfCalls.get(i)
				.evalsha(call.script().getSha1(), outputType(call), call.keyBytes(), call.argBytes()));
		}
		List<Object> replies = new ArrayList<>(calls.size());
		for (int i = 0; i < calls.size(); i++) {
			ScriptCall call = calls.get(i);
			try {
				replies.add(await(futures.get(i), deadline, timeout));
			}
			catch (DataAccessException ex) {
				if (kept.test(ex)) {
					replies.add(ex);
					continue;
				}
				if (!isNoScript(ex)) {
					cancel(futures, i + 1);
					throw ex;
				}
				RedisFuture<Object> again = commandsOfCalls.get(i)
					.eval(call.script().getScriptAsString().getBytes(StandardCharsets.UTF_8), outputType(call),
							call.keyBytes(), call.argBytes());
				try {
					replies.add(await(again, deadline, timeout));
				}
				catch (DataAccessException againFailure) {
					if (kept.test(againFailure)) {
						replies.add(againFailure);
						continue;
					}
					cancel(futures, i + 1);
					throw againFailure;
				}
			}
		}
		return replies;
	}

	/**
	 * Waits for a reply until a deadline; cancels the command when it passes.
	 * @param future the command's future
	 * @param deadline the {@link System#nanoTime()} to wait until
	 * @param timeout the whole wait, for the exception's message
	 * @return the reply
	 * @throws DataAccessException if the command failed or did not answer in time
	 */
	static <T> T await(RedisFuture<T> future, long deadline, Duration timeout) {
		try {
			T reply = future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			if (reply == null) {
				throw new RedisSystemException("Redis returned no reply to a script call", null);
			}
			return reply;
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw new QueryTimeoutException("Redis did not answer within " + Durations.format(timeout)
					+ " (the call may still have run on the server)", ex);
		}
		catch (InterruptedException ex) {
			future.cancel(true);
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException("Interrupted while waiting for Redis (the call may have run)", ex);
		}
		catch (ExecutionException ex) {
			throw translate(ex.getCause());
		}
	}

	/**
	 * Waits for a reply until a deadline, as {@link #await(RedisFuture, long, Duration)}
	 * does; cancels the future when it passes.
	 * @param future the reply
	 * @param deadline the {@link System#nanoTime()} to wait until
	 * @param timeout the whole wait, for the exception's message
	 * @return the reply
	 * @throws DataAccessException if the call failed or did not answer in time
	 */
	static <T> T awaitFuture(CompletableFuture<T> future, long deadline, Duration timeout) {
		try {
			return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw new QueryTimeoutException("Redis did not answer within " + Durations.format(timeout), ex);
		}
		catch (InterruptedException ex) {
			future.cancel(true);
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException("Interrupted while waiting for Redis", ex);
		}
		catch (ExecutionException ex) {
			throw translate(ex.getCause());
		}
	}

	private static void cancel(List<RedisFuture<Object>> futures, int from) {
		for (int i = from; i < futures.size(); i++) {
			futures.get(i).cancel(true);
		}
	}

	static DataAccessException translate(@Nullable Throwable cause) {
		if (cause instanceof CompletionException completion) {
			return translate(completion.getCause());
		}
		if (cause instanceof DataAccessException dataAccess) {
			return dataAccess;
		}
		if (cause instanceof Exception exception) {
			DataAccessException translated = LETTUCE_EXCEPTIONS.convert(exception);
			if (translated != null) {
				return translated;
			}
		}
		return new RedisSystemException("Script call failed: " + cause, cause);
	}

	private static Object runBlocking(RedisConnection connection, ScriptCall call) {
		ReturnType returnType = (call.script().getResultType() == Long.class) ? ReturnType.INTEGER : ReturnType.MULTI;
		byte[][] keysAndArgs = call.keysAndArgs();
		Object reply;
		try {
			reply = connection.scriptingCommands()
				.evalSha(call.script().getSha1(), returnType, call.keys().size(), keysAndArgs);
		}
		catch (DataAccessException ex) {
			if (!isNoScript(ex)) {
				throw ex;
			}
			reply = connection.scriptingCommands()
				.eval(call.script().getScriptAsString().getBytes(StandardCharsets.UTF_8), returnType,
						call.keys().size(), keysAndArgs);
		}
		if (reply == null) {
			throw new RedisSystemException("Redis returned no reply to a script call", null);
		}
		return reply;
	}

	private static ScriptOutputType outputType(ScriptCall call) {
		return (call.script().getResultType() == Long.class) ? ScriptOutputType.INTEGER : ScriptOutputType.MULTI;
	}

	static boolean isNoScript(Throwable ex) {
		return causeMessageContains(ex, "NOSCRIPT");
	}

	static boolean causeMessageContains(Throwable ex, String text) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains(text)) {
				return true;
			}
		}
		return false;
	}

	/** How a call is sent. */
	private enum Sending {

		/** By its digest, and in full if Redis lost the script. */
		BY_DIGEST,

		/** By its digest only. */
		BY_DIGEST_ONCE,

		/** In full. */
		IN_FULL

	}

	/**
	 * One call of a script.
	 *
	 * @param script the script
	 * @param keys its keys, in the order of its header
	 * @param args its arguments, in the order of its header
	 */
	record ScriptCall(RedisScript<?> script, List<String> keys, List<?> args) {

		byte[][] keyBytes() {
			byte[][] bytes = new byte[this.keys.size()][];
			for (int i = 0; i < bytes.length; i++) {
				bytes[i] = this.keys.get(i).getBytes(StandardCharsets.UTF_8);
			}
			return bytes;
		}

		byte[][] argBytes() {
			byte[][] bytes = new byte[this.args.size()][];
			for (int i = 0; i < bytes.length; i++) {
				bytes[i] = ScriptArgumentSerializer.INSTANCE.serialize(this.args.get(i));
			}
			return bytes;
		}

		byte[][] keysAndArgs() {
			byte[][] keyBytes = keyBytes();
			byte[][] argBytes = argBytes();
			byte[][] all = new byte[keyBytes.length + argBytes.length][];
			System.arraycopy(keyBytes, 0, all, 0, keyBytes.length);
			System.arraycopy(argBytes, 0, all, keyBytes.length, argBytes.length);
			return all;
		}

	}

}
