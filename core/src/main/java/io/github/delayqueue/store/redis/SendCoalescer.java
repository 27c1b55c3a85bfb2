package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;

/**
 * Puts the sends to one partition (or topic) that are on their way at the same moment
 * into as few script calls as it can: at most {@value #CALLS_ON_THEIR_WAY} calls of a
 * partition are on their way at once, and the sends that come meanwhile wait here and go
 * together in the next call, up to {@value RedisSends#MAX_SEND_CHUNK} messages and about
 * {@value RedisSends#MAX_SEND_CHUNK_BYTES} bytes. A send to a partition with room goes at
 * once, so a lone send waits no longer than before; under load, Redis runs one script
 * call for many messages. A send too large for one call is taken in chunks, and once the
 * call of its first chunk is taken, the calls of the others follow it at once, whatever
 * the room: a large batch costs one round trip. A send that replaces a message waits (and
 * the sends behind it with it) while an earlier send of that id is on its way, and never
 * shares a call with one: if the client sent the earlier call again after losing its
 * reply, that call would otherwise run again after the replacement and report its message
 * as a duplicate, though it stored it. The calls of a partition are written in order, and
 * the sends in a call keep the order they came in. A call takes sends whose deadlines are
 * within {@link #DEADLINE_SPREAD_NANOS 50 ms} of each other and waits for Redis until the
 * latest, so a send may fail up to 50 ms after its own deadline. Thread-safe.
 *
 * <p>
 * A call is never written from inside a reply's callback on the Redis client's I/O
 * thread: the client writes a command at once from its I/O thread but queues one from any
 * other thread, so a call written there could overtake a call another thread had just
 * queued, and a later send of an id could then be stored first. After a reply, the next
 * calls are written by a task queued on that I/O thread (behind the commands queued
 * before it; on the writer thread while the I/O thread is not known), and no other thread
 * writes a call of the partition while that task is queued: calls go out in the order
 * they were taken. Once a reply has shown the I/O thread, a send that finds room queues
 * that task too rather than writing its call itself: a sender would otherwise hold the
 * partition's lock while the client wakes the I/O thread, which then waits for that lock
 * to handle a reply (with waiting senders on two cores, the send rate fell by a tenth to
 * a third, and the p99 of a send doubled).
 *
 * <p>
 * A call that stored nothing because Redis lost the script ({@code NOSCRIPT}) or a
 * partition refused this application's count (its count is changing) is sent again (in
 * full, or once the count is settled) once the later calls of its partition already on
 * their way are answered, and before any new call is taken. A send in it whose id such a
 * later call also sent fails instead, having stored nothing, unless that call stored
 * nothing either (then both are sent again, in order): it never overtakes a later send.
 */
final class SendCoalescer {

	/** Most calls of one partition on their way at once. */
	static final int CALLS_ON_THEIR_WAY = 4;

	/**
	 * How far apart the deadlines of the sends in one call may be: the call waits for
	 * Redis until the latest of them.
	 */
	static final long DEADLINE_SPREAD_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/**
	 * How long before the deadline of the sends refused while a count was changing the
	 * settling of that count gives up, so that they fail with its reason.
	 */
	private static final long SETTLE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/** How long after the earliest deadline of the sends that wait they are failed. */
	private static final long EXPIRY_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final Map<String, Partition> partitions = new ConcurrentHashMap<>();

	private final Executor writer;

	private final Executor settler;

	/**
	 * Creates the coalescer.
	 * @param writer one thread, from which the calls of a partition are written while the
	 * I/O thread of its connection is not known
	 * @param settler where a partition's count is settled before a call it refused is
	 * sent again (the settling waits for Redis)
	 */
	SendCoalescer(ScriptCalls calls, PartitionRouter router, Executor writer, Executor settler) {
		this.calls = calls;
		this.router = router;
		this.writer = writer;
		this.settler = settler;
	}

	/**
	 * Sends messages to a partition, alone or with others sent at the same moment. The
	 * chunks of one send go in calls written back to back, as soon as the first of them
	 * has room: a large send costs one round trip, not one per two chunks.
	 * @param partition the partition (or topic)
	 * @param chunks the messages in chunks of at most {@value RedisSends#MAX_SEND_CHUNK}
	 * messages, in send order
	 * @param deadline the {@link System#nanoTime()} by which Redis must have answered
	 * @return the reply for each chunk, as a send call of it alone gives it, to be read
	 * by {@link ScriptCodecs.Send}; or a failure: a partition's refusal only as a
	 * {@link PartitionCountException}; completes on the Redis client's I/O thread
	 */
	List<CompletableFuture<Object>> submit(String partition, List<List<NewMessage>> chunks, long deadline) {
		List<Pending> sends = new ArrayList<>(chunks.size());
		Object send = new Object();
		for (int chunk = 0; chunk < chunks.size(); chunk++) {
			sends.add(new Pending(chunks.get(chunk), deadline, send, chunk));
		}
		this.partitions.computeIfAbsent(partition, Partition::new).add(sends);
		return sends.stream().map((pending) -> pending.reply).toList();
	}

	/** The sends of one partition waiting for room, and its calls on their way. */
	private final class Partition {

		private final String name;

		/** Guarded by this. */
		private final ArrayDeque<Pending> waiting = new ArrayDeque<>();

		/** The calls on their way, and those to be sent again. Guarded by this. */
		private int onTheirWay;

		/** The calls written whose replies are not handled yet. Guarded by this. */
		private final List<Call> written = new ArrayList<>(CALLS_ON_THEIR_WAY);

		/**
		 * The calls to send again, by number: they are sent in the order they were first
		 * taken, whatever order they failed in; while there are any, no new call is
		 * taken. Guarded by this.
		 */
		private final TreeMap<Long, Resend> resends = new TreeMap<>();

		/**
		 * Whether the count is being settled for calls to send again. Guarded by this.
		 */
		private boolean settling;

		/**
		 * The Redis client's I/O thread of the partition's connection, as the latest
		 * reply showed it: the calls are written from a task on it. Guarded by this.
		 */
		private @Nullable EventExecutor ioThread;

		/**
		 * Whether a task that writes calls is queued: no other thread writes a call
		 * meanwhile, since the task writes at once on the I/O thread a call taken after
		 * one written and queued elsewhere. Guarded by this.
		 */
		private boolean writerQueued;

		/** Whether the timer of {@link #armExpiry()} is armed. Guarded by this. */
		private boolean expiryArmed;

		/** The number of the next call taken. Guarded by this. */
		private long taken;

		/**
		 * The send of the last chunk in the last call taken: a call for its next chunk
		 * goes at once, whatever the room. Guarded by this.
		 */
		private @Nullable Object lastSend;

		/** The number of that chunk in its send. Guarded by this. */
		private int lastChunk;

		Partition(String name) {
			this.name = name;
		}

		void add(List<Pending> sends) {
			List<Call> taken = new ArrayList<>();
			boolean queueWriter = false;
			synchronized (this) {
				this.waiting.addAll(sends);
				if (this.ioThread != null) {
					// Written by a task on the I/O thread, with whatever else waits by
					// then:
					// this thread never holds the lock while the client wakes that
					// thread.
					queueWriter = this.resends.isEmpty() && hasRoom() && queueWriter();
				}
				else {
					while (this.resends.isEmpty() && !this.writerQueued && hasRoom()) {
						this.onTheirWay++;
						taken.add(takeCall());
					}
				}
				if (!this.waiting.isEmpty()) {
					armExpiry();
				}
			}
			if (queueWriter) {
				runWriter();
			}
			taken.forEach(this::follow);
		}

		/**
		 * Whether a call may be taken for the sends that wait: fewer than
		 * {@value #CALLS_ON_THEIR_WAY} calls are on their way, or the first send that
		 * waits is the next chunk of the last one taken. Holding the lock.
		 */
		private boolean hasRoom() {
			Pending first = this.waiting.peek();
			return first != null && !replacesOnItsWay(first) && (this.onTheirWay < CALLS_ON_THEIR_WAY
					|| (first.send == this.lastSend && first.chunk == this.lastChunk + 1));
		}

		/**
		 * Whether a send replaces a message that a call on its way also sends: it waits
		 * for that call's reply. Holding the lock.
		 */
		private boolean replacesOnItsWay(Pending pending) {
			if (pending.replaced.isEmpty()) {
				return false;
			}
			for (Call call : this.written) {
				for (Pending onItsWay : call.batch) {
					if (onItsWay.sendsAny(pending.replaced)) {
						return true;
					}
				}
			}
			return false;
		}

		/**
		 * Makes sure the sends that wait (for room, or to be sent again) fail at their
		 * deadlines even if nothing else happens meanwhile: one timer per partition, at
		 * the earliest deadline among them. Holding the lock.
		 */
		private void armExpiry() {
			if (this.expiryArmed) {
				return;
			}
			long earliest = 0;
			boolean any = false;
			if (!this.waiting.isEmpty()) {
				earliest = this.waiting.peek().deadline;
				any = true;
			}
			for (Resend resend : this.resends.values()) {
				for (Pending pending : resend.kept) {
					if (!any || pending.deadline - earliest < 0) {
						earliest = pending.deadline;
						any = true;
					}
				}
			}
			if (!any) {
				return;
			}
			this.expiryArmed = true;
			long delay = Math.max(0, earliest - System.nanoTime()) + EXPIRY_SLACK_NANOS;
			CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS).execute(this::expireLate);
		}

		/**
		 * Fails the sends past their deadline that still wait for room (from the oldest)
		 * or to be sent again; a call to send again left with none gives its room back.
		 */
		private void expireLate() {
			List<Pending> expired = new ArrayList<>();
			boolean queueWriter;
			synchronized (this) {
				this.expiryArmed = false;
				long now = System.nanoTime();
				while (!this.waiting.isEmpty() && this.waiting.peek().deadline - now <= 0) {
					expired.add(this.waiting.poll());
				}
				for (Iterator<Resend> resends = this.resends.values().iterator(); resends.hasNext();) {
					Resend resend = resends.next();
					for (Iterator<Pending> kept = resend.kept.iterator(); kept.hasNext();) {
						Pending pending = kept.next();
						if (pending.deadline - now <= 0) {
							kept.remove();
							expired.add(pending);
						}
					}
					if (resend.kept.isEmpty()) {
						resends.remove();
						this.onTheirWay--;
					}
				}
				queueWriter = wantsWriter() && queueWriter();
				armExpiry();
			}
			expired.forEach(Pending::expire);
			if (queueWriter) {
				runWriter();
			}
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
				if (reply == null) {
					call = next(null, null);
					continue;
				}
				if (!reply.isDone()) {
					Call sent = call;
					// A reply that came meanwhile is handled on this thread, which tells
					// nothing of the connection's I/O thread.
					Thread following = Thread.currentThread();
					reply.whenComplete(
							(value, failure) -> replied(sent, value, failure, Thread.currentThread() != following));
					return;
				}
				Object value = null;
				Throwable failure = null;
				try {
					value = reply.join();
				}
				catch (RuntimeException ex) {
					failure = ex;
				}
				if (failure != null && sentAgain(call, failure, false)) {
					return;
				}
				answer(call.batch, value, failure);
				call = next(call, failure);
			}
		}

		/**
		 * The reply of a call on its way, usually on the Redis client's I/O thread.
		 * @param learn whether it came on another thread than the one that wrote the
		 * call, which is then the I/O thread of the connection
		 */
		private void replied(Call call, @Nullable Object value, @Nullable Throwable failure, boolean learn) {
			if (failure != null && sentAgain(call, failure, learn)) {
				return;
			}
			List<Overtaken> overtaken;
			boolean queueWriter;
			synchronized (this) {
				if (learn) {
					learnIoThread();
				}
				this.written.remove(call);
				this.onTheirWay--;
				overtaken = answeredFor(call, storedNothing(failure));
				queueWriter = wantsWriter() && queueWriter();
			}
			try {
				// The next call first, so that Redis stays busy while the replies are
				// handed out.
				if (queueWriter) {
					runWriter();
				}
			}
			finally {
				answer(call.batch, value, failure);
				overtaken.forEach(Overtaken::fail);
			}
		}

		/**
		 * @param done the call answered, if any
		 * @param failure its failure, if any
		 * @return the next call, written from this thread, or {@code null}: its room is
		 * given back (a queued writer task takes the sends that wait)
		 */
		private @Nullable Call next(@Nullable Call done, @Nullable Throwable failure) {
			List<Overtaken> overtaken = List.of();
			Call next = null;
			boolean queueWriter = false;
			synchronized (this) {
				if (done != null) {
					this.written.remove(done);
					overtaken = answeredFor(done, storedNothing(failure));
				}
				if (!this.waiting.isEmpty() && !replacesOnItsWay(this.waiting.peek()) && this.resends.isEmpty()
						&& !this.writerQueued) {
					next = takeCall();
				}
				else {
					this.onTheirWay--;
					queueWriter = wantsWriter() && queueWriter();
				}
			}
			overtaken.forEach(Overtaken::fail);
			if (queueWriter) {
				runWriter();
			}
			return next;
		}

		/**
		 * Whether a writer task has work: calls to send again ready first in line, or,
		 * with none to send again, sends waiting for room. Holding the lock.
		 */
		private boolean wantsWriter() {
			if (!this.resends.isEmpty()) {
				return this.resends.firstEntry().getValue().ready();
			}
			return hasRoom();
		}

		/**
		 * Writes, as a task on the partition's I/O thread (or the writer thread while it
		 * is not known), the calls to send again that are ready, then calls for the sends
		 * that wait, while there is room. A task queued on the I/O thread runs after the
		 * commands other threads queued before it, and none are queued after it until it
		 * runs, so what it writes there at once goes out in order.
		 */
		private void writeWaiting() {
			List<Call> sent = new ArrayList<>();
			synchronized (this) {
				this.writerQueued = false;
				while (!this.resends.isEmpty() && this.resends.firstEntry().getValue().ready()) {
					Resend resend = this.resends.pollFirstEntry().getValue();
					sent.add(write(resend.call.number, alive(resend.kept), resend.call.again(resend.again)));
				}
				while (this.resends.isEmpty() && hasRoom()) {
					this.onTheirWay++;
					sent.add(takeCall());
				}
			}
			sent.forEach(this::follow);
		}

		/**
		 * Notes that a writer task is to be queued, unless one is. Holding the lock.
		 * @return whether the caller queues it
		 */
		private boolean queueWriter() {
			if (this.writerQueued) {
				return false;
			}
			this.writerQueued = true;
			return true;
		}

		/**
		 * Queues {@link #writeWaiting()} on the partition's I/O thread, else on the
		 * writer thread; runs it here once both are closed (the store is closing, and
		 * order no longer matters).
		 */
		private void runWriter() {
			EventExecutor executor;
			synchronized (this) {
				executor = this.ioThread;
			}
			if (executor != null) {
				try {
					executor.execute(this::writeWaiting);
					return;
				}
				catch (RejectedExecutionException ex) {
					synchronized (this) {
						this.ioThread = null;
					}
				}
			}
			try {
				SendCoalescer.this.writer.execute(this::writeWaiting);
			}
			catch (RejectedExecutionException ex) {
				writeWaiting();
			}
		}

		/**
		 * Notes the I/O thread a reply came on, if it is one, in place of the one known:
		 * a connection that came back may be served by another I/O thread of the client,
		 * and the writer task is then queued there, not on the old one, which serves
		 * other connections now. Calls stay in order: only one writer task is queued at a
		 * time, and one on the old thread that writes to the new connection queues its
		 * writes there before any later task. Holding the lock.
		 */
		private void learnIoThread() {
			EventExecutor current = ThreadExecutorMap.currentExecutor();
			if (current != null && current != this.ioThread && current.inEventLoop()) {
				this.ioThread = current;
			}
		}

		/**
		 * Has a call that stored nothing sent again, keeping its room, when it failed in
		 * a way that allows it and was not sent again that way before. It is sent once
		 * the later calls of the partition on their way are answered (and, after a
		 * refusal, the count is settled): a send in it whose id one of them also sent
		 * fails instead, unless that call stored nothing either, so as never to overtake
		 * a later send.
		 * @param learn whether the failure came on the connection's I/O thread, to be
		 * noted
		 * @return whether it is sent again; if not, the caller answers it with the
		 * failure (a send already answered keeps its answer)
		 */
		private boolean sentAgain(Call call, Throwable failure, boolean learn) {
			Again again = Again.after(call, failure);
			if (again == null) {
				if (PartitionCounts.isRefusal(failure)) {
					String topic = TopicPartitions.topicOf(this.name);
					fail(call.batch, PartitionCountException.refusedAgain(topic,
							SendCoalescer.this.router.partitions().count(topic)));
				}
				return false;
			}
			boolean settle = false;
			boolean queueWriter;
			synchronized (this) {
				if (learn) {
					learnIoThread();
				}
				this.written.remove(call);
				answeredFor(call, true);
				Set<Long> later = new HashSet<>();
				for (Call onItsWay : this.written) {
					if (onItsWay.number > call.number) {
						later.add(onItsWay.number);
					}
				}
				this.resends.put(call.number, new Resend(call, again, later));
				armExpiry();
				if (again == Again.AFTER_SETTLING && !this.settling) {
					this.settling = true;
					settle = true;
				}
				queueWriter = wantsWriter() && queueWriter();
			}
			if (settle) {
				settleThenWrite();
			}
			if (queueWriter) {
				runWriter();
			}
			return true;
		}

		/**
		 * Notes that a call was answered, for the calls to send again that wait for it:
		 * when it may have stored something, their sends of the same ids are overtaken,
		 * and a call left with no send gives its room back. Holding the lock.
		 * @param call the call answered
		 * @param storedNothing whether it surely stored nothing
		 * @return the sends overtaken, to fail outside the lock
		 */
		private List<Overtaken> answeredFor(Call call, boolean storedNothing) {
			List<Overtaken> overtaken = new ArrayList<>();
			Set<String> ids = null;
			for (Iterator<Resend> resends = this.resends.values().iterator(); resends.hasNext();) {
				Resend resend = resends.next();
				if (!resend.waitingFor.remove(call.number) || storedNothing) {
					continue;
				}
				if (ids == null) {
					ids = new HashSet<>();
					for (Pending pending : call.batch) {
						for (NewMessage message : pending.messages) {
							ids.add(message.id());
						}
					}
				}
				for (Iterator<Pending> kept = resend.kept.iterator(); kept.hasNext();) {
					Pending pending = kept.next();
					if (pending.sendsAny(ids)) {
						kept.remove();
						overtaken.add(new Overtaken(pending, resend.again));
					}
				}
				if (resend.kept.isEmpty()) {
					resends.remove();
					this.onTheirWay--;
				}
			}
			return overtaken;
		}

		/**
		 * Settles the topic's count on the settler, then marks the calls to send again
		 * that were refused before ready and has them written; if the count cannot be
		 * settled, they fail and their rooms are given back.
		 */
		private void settleThenWrite() {
			try {
				SendCoalescer.this.settler.execute(() -> {
					List<Resend> settled;
					long deadline = 0;
					synchronized (this) {
						settled = new ArrayList<>(this.resends.values());
						for (Resend resend : settled) {
							deadline = resend.call.latestDeadline(deadline);
						}
					}
					RuntimeException failure = null;
					try {
						// Ends a little before the sends' deadline, so that they fail
						// saying why (the count), not by their expiry.
						long margin = Math.min(SETTLE_MARGIN_NANOS, Math.max(0, (deadline - System.nanoTime()) / 4));
						SendCoalescer.this.router.settle(TopicPartitions.topicOf(this.name), deadline - margin);
					}
					catch (RuntimeException ex) {
						failure = ex;
					}
					settled(settled, failure);
				});
			}
			catch (RejectedExecutionException ex) {
				settled(List.of(), new DataAccessResourceFailureException("The message store is closed", ex));
			}
		}

		/**
		 * After settling the count: the calls to send again known when it began are
		 * ready; or, if it failed, every call to send again fails.
		 */
		private void settled(List<Resend> settled, @Nullable RuntimeException failure) {
			List<Pending> failed = new ArrayList<>();
			boolean queueWriter;
			boolean settleAgain = false;
			synchronized (this) {
				this.settling = false;
				if (failure != null) {
					while (!this.resends.isEmpty()) {
						failed.addAll(this.resends.pollFirstEntry().getValue().kept);
						this.onTheirWay--;
					}
				}
				else {
					settled.forEach(Resend::settled);
					for (Resend resend : this.resends.values()) {
						settleAgain |= !resend.settled;
					}
					this.settling = settleAgain;
				}
				queueWriter = (failure != null || wantsWriter()) && queueWriter();
			}
			if (failure != null) {
				fail(failed, failure);
			}
			if (settleAgain) {
				settleThenWrite();
			}
			if (queueWriter) {
				runWriter();
			}
		}

		/**
		 * Takes the sends for one call and writes it, holding the lock, so that calls go
		 * out in the order their sends came. Called holding the lock, with at least one
		 * send waiting.
		 */
		private Call takeCall() {
			List<Pending> batch = takeBatch();
			if (!batch.isEmpty()) {
				Pending last = batch.get(batch.size() - 1);
				this.lastSend = last.send;
				this.lastChunk = last.chunk;
			}
			return write(this.taken++, batch, Sent.FIRST);
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
						|| next.deadline - batch.get(0).deadline > DEADLINE_SPREAD_NANOS
						|| replacesAnyOf(next, batch))) {
					break;
				}
				batch.add(this.waiting.poll());
				messages += next.messages.size();
				bytes += next.bytes;
			}
			return batch;
		}

		/** Whether a send replaces a message that one of a batch sends. */
		private static boolean replacesAnyOf(Pending pending, List<Pending> batch) {
			if (pending.replaced.isEmpty()) {
				return false;
			}
			for (Pending taken : batch) {
				if (taken.sendsAny(pending.replaced)) {
					return true;
				}
			}
			return false;
		}

		/** The sends whose deadlines have not passed; the others fail, not sent. */
		private List<Pending> alive(List<Pending> sends) {
			long now = System.nanoTime();
			List<Pending> alive = new ArrayList<>(sends.size());
			for (Pending pending : sends) {
				if (pending.deadline - now <= 0) {
					pending.expire();
				}
				else {
					alive.add(pending);
				}
			}
			return alive;
		}

		/**
		 * Writes one call for the sends of a batch, waiting for Redis until the latest of
		 * their deadlines, and notes it on its way. Called holding the lock.
		 * @return the call: its reply failed if it could not be written, {@code null} if
		 * the batch is empty
		 */
		private Call write(long number, List<Pending> batch, Sent sent) {
			Call call = new Call(number, batch, batch.isEmpty() ? null : reply(batch, sent), sent);
			if (call.reply != null) {
				this.written.add(call);
			}
			return call;
		}

		private CompletableFuture<Object> reply(List<Pending> batch, Sent sent) {
			List<NewMessage> messages = new ArrayList<>();
			for (Pending pending : batch) {
				messages.addAll(pending.messages);
			}
			try {
				ScriptCodecs.Send send = new ScriptCodecs.Send(SendCoalescer.this.calls.signalChannel(this.name),
						this.name, SendCoalescer.this.router.countOf(this.name),
						SendCoalescer.this.calls.maxRemembered(), messages);
				ScriptRunner.ScriptCall call = SendCoalescer.this.calls.call(this.name, send);
				Duration timeout = PartitionCounts.remaining(Call.latestDeadline(batch, batch.get(0).deadline));
				return sent.inFull ? SendCoalescer.this.calls.submitInFull(call, timeout)
						: SendCoalescer.this.calls.submitOnce(call, timeout);
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
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

		private void fail(List<Pending> sends, Throwable failure) {
			sends.forEach((pending) -> pending.reply.completeExceptionally(failure));
		}

	}

	/**
	 * Whether a call surely stored nothing: Redis lost the script, or a partition refused
	 * the count.
	 */
	private static boolean storedNothing(@Nullable Throwable failure) {
		return failure != null && (ScriptRunner.isNoScript(failure) || PartitionCounts.isRefusal(failure));
	}

	/** Why a call is sent again. */
	private enum Again {

		/** Redis lost the script: sent again in full. */
		IN_FULL,

		/**
		 * A partition refused this application's count: sent again once it is settled.
		 */
		AFTER_SETTLING;

		/**
		 * @return why a call that failed is to be sent again, or {@code null} if it is
		 * not (it may have stored something, or was sent again that way before)
		 */
		static @Nullable Again after(Call call, Throwable failure) {
			if (ScriptRunner.isNoScript(failure)) {
				return call.sent.inFull ? null : IN_FULL;
			}
			if (PartitionCounts.isRefusal(failure)) {
				return call.sent.settled ? null : AFTER_SETTLING;
			}
			return null;
		}

		/** The failure of a send that is not sent again, a later one being on its way. */
		RuntimeException overtaken() {
			return new RedisSystemException(((this == IN_FULL) ? "Redis had lost the send script"
					: "A partition refused the send while the topic's partition count was changing")
					+ ", and a later send of the same id was already on its way: nothing was stored, and the send "
					+ "was not made again so as not to overtake that one", null);
		}

	}

	/**
	 * How a call was sent: in full or by digest, and whether after settling the count.
	 */
	private record Sent(boolean inFull, boolean settled) {

		static final Sent FIRST = new Sent(false, false);

	}

	/**
	 * A call: its number (calls are numbered in the order they are taken), its sends, and
	 * its reply, {@code null} when every send taken had passed its deadline.
	 */
	private record Call(long number, List<Pending> batch, @Nullable CompletableFuture<Object> reply, Sent sent) {

		/** How a call sent again for a reason is sent. */
		Sent again(Again again) {
			return (again == Again.IN_FULL) ? new Sent(true, this.sent.settled) : new Sent(this.sent.inFull, true);
		}

		long latestDeadline(long than) {
			return latestDeadline(this.batch, than);
		}

		static long latestDeadline(List<Pending> batch, long than) {
			long deadline = than;
			for (Pending pending : batch) {
				deadline = (pending.deadline - deadline > 0) ? pending.deadline : deadline;
			}
			return deadline;
		}

	}

	/**
	 * A call to send again: the sends of it kept, why, whether the count is settled (a
	 * refused call is sent once it is), and the numbers of the later calls on their way
	 * whose replies it waits for. Guarded by the partition.
	 */
	private static final class Resend {

		private final Call call;

		private final List<Pending> kept;

		private final Again again;

		private final Set<Long> waitingFor;

		private boolean settled;

		Resend(Call call, Again again, Set<Long> waitingFor) {
			this.call = call;
			this.kept = new ArrayList<>(call.batch);
			this.again = again;
			this.waitingFor = waitingFor;
			this.settled = (again != Again.AFTER_SETTLING);
		}

		void settled() {
			this.settled = true;
		}

		/** Whether it may be written now. */
		boolean ready() {
			return this.settled && this.waitingFor.isEmpty();
		}

	}

	/** A send not sent again, a later one of the same id being on its way. */
	private record Overtaken(Pending pending, Again again) {

		void fail() {
			this.pending.reply.completeExceptionally(this.again.overtaken());
		}

	}

	/** A send waiting for its call, and its reply. */
	private static final class Pending {

		private final List<NewMessage> messages;

		private final long deadline;

		private final long bytes;

		private final CompletableFuture<Object> reply = new CompletableFuture<>();

		/** Stands for the send this is a chunk of. */
		private final Object send;

		/** The number of this chunk in its send, from 0. */
		private final int chunk;

		/** The ids of the messages it sends to replace a pending one. */
		private final Set<String> replaced;

		Pending(List<NewMessage> messages, long deadline, Object send, int chunk) {
			this.messages = messages;
			this.deadline = deadline;
			this.send = send;
			this.chunk = chunk;
			Set<String> replaced = null;
			for (NewMessage message : messages) {
				if (message.replaceIfPending()) {
					replaced = (replaced != null) ? replaced : new HashSet<>();
					replaced.add(message.id());
				}
			}
			this.replaced = (replaced != null) ? replaced : Set.of();
			long bytes = 0;
			for (NewMessage message : messages) {
				bytes += message.body().length;
			}
			this.bytes = bytes;
		}

		/** Fails the send, not sent: its deadline passed while it waited for room. */
		void expire() {
			this.reply.completeExceptionally(new QueryTimeoutException(
					"Redis did not answer in time: the send waited for earlier ones and was not sent"));
		}

		boolean sendsAny(Set<String> ids) {
			if (ids.isEmpty()) {
				return false;
			}
			for (NewMessage message : this.messages) {
				if (ids.contains(message.id())) {
					return true;
				}
			}
			return false;
		}

	}

}
