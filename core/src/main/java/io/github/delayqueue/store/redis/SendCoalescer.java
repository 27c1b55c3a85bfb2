package io.github.delayqueue.store.redis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.store.NewMessage;
import org.jspecify.annotations.Nullable;

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
 */
final class SendCoalescer {

	/** Most calls of one partition on their way at once. */
	static final int CALLS_ON_THEIR_WAY = 2;

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final Map<String, Partition> partitions = new ConcurrentHashMap<>();

	SendCoalescer(ScriptCalls calls, PartitionRouter router) {
		this.calls = calls;
		this.router = router;
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
			List<Pending> batch;
			synchronized (this) {
				this.waiting.add(pending);
				if (this.onTheirWay >= CALLS_ON_THEIR_WAY) {
					return;
				}
				this.onTheirWay++;
				batch = takeBatch();
			}
			write(batch);
		}

		/** A call answered: the next one takes what waits, if anything does. */
		private void next() {
			List<Pending> batch;
			synchronized (this) {
				if (this.waiting.isEmpty()) {
					this.onTheirWay--;
					return;
				}
				batch = takeBatch();
			}
			write(batch);
		}

		/**
		 * Takes the sends for one call, oldest first, within the limits of a call; at
		 * least one. Called holding the lock, with at least one send waiting.
		 */
		private List<Pending> takeBatch() {
			List<Pending> batch = new ArrayList<>();
			int messages = 0;
			long bytes = 0;
			while (!this.waiting.isEmpty()) {
				Pending next = this.waiting.peek();
				if (!batch.isEmpty() && (messages + next.messages.size() > RedisSends.MAX_SEND_CHUNK
						|| bytes + next.bytes > RedisSends.MAX_SEND_CHUNK_BYTES)) {
					break;
				}
				batch.add(this.waiting.poll());
				messages += next.messages.size();
				bytes += next.bytes;
			}
			return batch;
		}

		private void write(List<Pending> batch) {
			List<NewMessage> messages = new ArrayList<>();
			long deadline = batch.get(0).deadline;
			for (Pending pending : batch) {
				messages.addAll(pending.messages);
				deadline = (pending.deadline - deadline < 0) ? pending.deadline : deadline;
			}
			CompletableFuture<Object> reply;
			try {
				ScriptCodecs.Send send = new ScriptCodecs.Send(SendCoalescer.this.calls.signalChannel(this.name),
						this.name, SendCoalescer.this.router.countOf(this.name), messages);
				reply = SendCoalescer.this.calls.submit(SendCoalescer.this.calls.call(this.name, send),
						PartitionCounts.remaining(deadline));
			}
			catch (RuntimeException ex) {
				reply = CompletableFuture.failedFuture(ex);
			}
			reply.whenComplete((value, failure) -> {
				// The next call first, so that Redis stays busy while the replies are
				// handed out.
				next();
				answer(batch, value, failure);
			});
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

	/** A send waiting for its call, and its reply. */
	private static final class Pending {

		private final List<NewMessage> messages;

		private final long deadline;

		private final long bytes;

		private final CompletableFuture<Object> reply = new CompletableFuture<>();

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
