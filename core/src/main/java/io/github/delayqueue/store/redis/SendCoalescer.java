package io.github.delayqueue.store.redis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.NewMessage;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.QueryTimeoutException;

/**
 * Puts the sends to one partition (or topic) that are on their way at the same moment
 * into as few script calls as it can: at most {@value #CALLS_ON_THEIR_WAY} calls of a
 * partition are on their way at once, and the sends that come meanwhile wait here and go
 * together in the next call, up to {@value RedisSends#MAX_SEND_CHUNK} messages and about
 * {@value RedisSends#MAX_SEND_CHUNK_BYTES} bytes. A send to a partition with room goes at
 * once, so a lone send waits no longer than before; under load, Redis runs one script
 * call for many messages. The calls of a partition are written in order, and the sends in
 * a call keep the order they came in. Each call waits for Redis until the earliest
 * deadline of its sends. Thread-safe.
 *
 * <p>
 * A call is never written from the Redis client's I/O thread: the client writes a command
 * at once from its I/O thread but queues one from any other thread, so a call written
 * there from a reply could overtake a call another thread wrote just before, and a later
 * send of an id could then be stored first. When a reply comes and sends wait, the next
 * call is written from the writer thread instead.
 */
final class SendCoalescer {

	/** Most calls of one partition on their way at once. */
	static final int CALLS_ON_THEIR_WAY = 2;

	/**
	 * How far apart the deadlines of the sends in one call may be: the call waits for
	 * Redis until the latest of them.
	 */
	static final long DEADLINE_SPREAD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final Map<String, Partition> partitions = new ConcurrentHashMap<>();

	private final Executor writer;

	/**
	 * Creates the coalescer.
	 * @param writer one thread, from which the calls that follow a reply are written
	 */
	SendCoalescer(ScriptCalls calls, PartitionRouter router, Executor writer) {
		this.calls = calls;
		this.router = router;
		this.writer = writer;
	}

	/**
	 * Sends messages to a partition, alone or with others sent at the same moment.
	 * @param partition the partition (or topic)
	 * @param messages at most {@value RedisSends#MAX_SEND_CHUNK} messages
	 * @param deadline the {@link System#nanoTime()} by which Redis must have answered
	 * @return the reply for these messages, as a send call of them alone gives it, to be
	 * read by {@link ScriptCodecs.Send}; completes on the Redis client's I/O thread
	 */
	CompletableFuture<Object> submit(String partition, List<NewMessage> messages, long deadline) {
		Pending pending = new Pending(messages, deadline);
		this.partitions.computeIfAbsent(partition, Partition::new).add(pending);
		return pending.reply;
	}

	/** The sends of one partition waiting for room, and its calls on their way. */
	private final class Partition {

		private final String name;

		/** Guarded by this. */
		private final ArrayDeque<Pending> waiting = new ArrayDeque<>();

		/** Guarded by this. */
		private int onTheirWay;

		Partition(String name) {
			this.name = name;
		}

		void add(Pending pending) {
			Call call;
			synchronized (this) {
				this.waiting.add(pending);
				if (this.onTheirWay >= CALLS_ON_THEIR_WAY) {
					return;
				}
				this.onTheirWay++;
				call = takeCall();
			}
			follow(call);
		}

		/**
		 * Follows calls, one after the other, while each fails before it goes out (no
		 * connection, say), so that a queue of them fails in a loop rather than deeper
		 * and deeper; once one is on its way, its reply continues from here.
		 */
		private void follow(@Nullable Call first) {
			Call call = first;
			while (call != null) {
				CompletableFuture<Object> reply = call.reply;
				if (reply != null) {
					if (!reply.isDone()) {
						List<Pending> sent = call.batch;
						reply.whenComplete((value, failure) -> {
							try {
								// The next call first, so that Redis stays busy while the
								// replies are handed out.
								followElsewhere();
							}
							finally {
								answer(sent, value, failure);
							}
						});
						return;
					}
					answer(call.batch, reply);
				}
				call = next();
			}
		}

		/**
		 * After a reply, on the Redis client's I/O thread: gives the room back when
		 * nothing waits, else has the next call written from the writer thread (or here,
		 * once the store is closed and ordering no longer matters).
		 */
		private void followElsewhere() {
			synchronized (this) {
				if (this.waiting.isEmpty()) {
					this.onTheirWay--;
					return;
				}
			}
			try {
				SendCoalescer.this.writer.execute(() -> follow(next()));
			}
			catch (RejectedExecutionException ex) {
				follow(next());
			}
		}

		/**
		 * @return the next call, written, or {@code null} when nothing waits: the room is
		 * given back
		 */
		private @Nullable Call next() {
			synchronized (this) {
				if (this.waiting.isEmpty()) {
					this.onTheirWay--;
					return null;
				}
				return takeCall();
			}
		}

		/**
		 * Takes the sends for one call and writes it, holding the lock, so that calls go
		 * out in the order their sends came. Called holding the lock, with at least one
		 * send waiting.
		 */
		private Call takeCall() {
			List<Pending> batch = takeBatch();
			return new Call(batch, batch.isEmpty() ? null : write(batch));
		}

		/**
		 * Takes the sends for one call, oldest first, within the limits of a call and
		 * with deadlines close to the first's, so that no send waits much longer than its
		 * own deadline, nor gives up much earlier. Sends already past their deadline fail
		 * here, not sent. Called holding the lock, with at least one send waiting.
		 */
		private List<Pending> takeBatch() {
			List<Pending> batch = new ArrayList<>();
			int messages = 0;
			long bytes = 0;
			long now = System.nanoTime();
			while (!this.waiting.isEmpty()) {
				Pending next = this.waiting.peek();
				if (next.deadline - now <= 0) {
					this.waiting.poll().expire();
					continue;
				}
				if (!batch.isEmpty() && (messages + next.messages.size() > RedisSends.MAX_SEND_CHUNK
						|| bytes + next.bytes > RedisSends.MAX_SEND_CHUNK_BYTES
						|| next.deadline - batch.get(0).deadline > DEADLINE_SPREAD_NANOS)) {
					break;
				}
				batch.add(this.waiting.poll());
				messages += next.messages.size();
				bytes += next.bytes;
			}
			return batch;
		}

		/**
		 * Writes one call for the sends of a batch, waiting for Redis until the latest of
		 * their deadlines.
		 * @return its reply; failed if it could not be written
		 */
		private CompletableFuture<Object> write(List<Pending> batch) {
			List<NewMessage> messages = new ArrayList<>();
			long deadline = batch.get(0).deadline;
			for (Pending pending : batch) {
				messages.addAll(pending.messages);
				deadline = (pending.deadline - deadline > 0) ? pending.deadline : deadline;
			}
			try {
				ScriptCodecs.Send send = new ScriptCodecs.Send(SendCoalescer.this.calls.signalChannel(this.name),
						this.name, SendCoalescer.this.router.countOf(this.name),
						SendCoalescer.this.calls.maxRemembered(), messages);
				return SendCoalescer.this.calls.submit(SendCoalescer.this.calls.call(this.name, send),
						PartitionCounts.remaining(deadline));
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}

		private void answer(List<Pending> batch, CompletableFuture<Object> done) {
			Object value = null;
			Throwable failure = null;
			try {
				value = done.join();
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			answer(batch, value, failure);
		}

		private void answer(List<Pending> batch, @Nullable Object value, @Nullable Throwable failure) {
			Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
			int from = 0;
			for (Pending pending : batch) {
				int to = from + pending.messages.size();
				if (cause != null) {
					pending.reply.completeExceptionally(cause);
				}
				else if (value instanceof List<?> values && values.size() >= 2 * to) {
					pending.reply.complete(values.subList(2 * from, 2 * to));
				}
				else {
					pending.reply.completeExceptionally(new IllegalStateException(
							"Redis replied to a send of " + to + " messages with too few values"));
				}
				from = to;
			}
		}

	}

	/**
	 * The sends of one call, and its reply: {@code null} when every send taken had passed
	 * its deadline.
	 */
	private record Call(List<Pending> batch, @Nullable CompletableFuture<Object> reply) {
	}

	/** A send waiting for its call, and its reply. */
	private static final class Pending {

		private final List<NewMessage> messages;

		private final long deadline;

		private final long bytes;

		private final CompletableFuture<Object> reply = new CompletableFuture<>();

		/** Fails the send, not sent: its deadline passed while it waited for room. */
		void expire() {
			this.reply.completeExceptionally(new QueryTimeoutException(
					"Redis did not answer in time: the send waited for earlier ones and was not sent"));
		}

		Pending(List<NewMessage> messages, long deadline) {
			this.messages = messages;
			this.deadline = deadline;
			long bytes = 0;
			for (NewMessage message : messages) {
				bytes += message.body().length;
			}
			this.bytes = bytes;
		}

	}

}
