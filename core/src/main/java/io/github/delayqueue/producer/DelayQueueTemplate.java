package io.github.delayqueue.producer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.observation.DefaultDelayQueueSenderObservationConvention;
import io.github.delayqueue.observation.DelayQueueObservation;
import io.github.delayqueue.observation.DelayQueueSenderContext;
import io.github.delayqueue.observation.DelayQueueSenderObservationConvention;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.time.Durations;
import org.apache.commons.logging.Log;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.util.unit.DataSize;

/**
 * Sends delayed messages and cancels or reschedules them while they are pending. Each
 * call is one round trip to Redis (a large batch is cut into several script calls sent
 * together), and waits for Redis at most {@code delay-queue.producer.send-timeout}. A
 * send refused as invalid has stored nothing; a send that fails in Redis throws
 * {@link SendFailedException} with the ids, as Redis may have stored the messages (or,
 * for a batch, a subset): sending them again with the same ids stores each at most once.
 * Due times are whole milliseconds, rounded up, so that nothing is due early.
 * Thread-safe.
 *
 * <p>
 * For {@link #send(String, Object, Duration)} the due time is the Redis server's clock
 * plus the delay, so the clocks of application hosts never matter.
 *
 * <p>
 * When transaction-aware (the default), a send inside an active Spring transaction is
 * checked at once but held back until the transaction commits, and dropped if it rolls
 * back. Its result then has the id, a due time estimated from this host's clock, and
 * {@code duplicate() == false}, since Redis has not been asked yet.
 */
public class DelayQueueTemplate {

	private static final Log logger = LogFactory.getLog(DelayQueueTemplate.class);

	private final MessageStore store;

	private final PayloadConverter payloadConverter;

	private final long maxPayloadBytes;

	private final boolean transactionAware;

	private final MessageIdGenerator idGenerator = new MessageIdGenerator();

	private DelayQueueMetrics metrics = DelayQueueMetrics.NONE;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable DelayQueueSenderObservationConvention observationConvention;

	/**
	 * Creates a transaction-aware template.
	 * @param store the Redis store
	 * @param payloadConverter converts payloads to bytes
	 * @param maxPayloadSize the largest payload accepted, after conversion
	 */
	public DelayQueueTemplate(MessageStore store, PayloadConverter payloadConverter, DataSize maxPayloadSize) {
		this(store, payloadConverter, maxPayloadSize, true);
	}

	/**
	 * Creates a template.
	 * @param store the Redis store
	 * @param payloadConverter converts payloads to bytes
	 * @param maxPayloadSize the largest payload accepted, after conversion
	 * @param transactionAware whether sends inside a Spring transaction wait for its
	 * commit (and are dropped on rollback)
	 */
	public DelayQueueTemplate(MessageStore store, PayloadConverter payloadConverter, DataSize maxPayloadSize,
			boolean transactionAware) {
		this.store = store;
		this.payloadConverter = payloadConverter;
		this.maxPayloadBytes = maxPayloadSize.toBytes();
		this.transactionAware = transactionAware;
	}

	/**
	 * Sets where the template reports sends, cancellations and reschedules.
	 * @param metrics the metrics
	 */
	public void setMetrics(DelayQueueMetrics metrics) {
		this.metrics = metrics;
	}

	/**
	 * Sets the registry of the producer observations; with a propagating tracer the trace
	 * context travels in the message headers to the listener.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Sets a convention for the producer observations, instead of the default one.
	 * @param observationConvention the convention
	 */
	public void setObservationConvention(DelayQueueSenderObservationConvention observationConvention) {
		this.observationConvention = observationConvention;
	}

	/**
	 * Sends a message due after a delay, measured from Redis server time.
	 * @param topic the topic
	 * @param payload the payload
	 * @param delay zero or positive, at most ten years
	 * @return the generated id and the due time
	 * @throws InvalidMessageException if an argument is not acceptable; nothing is stored
	 */
	public SendResult send(String topic, Object payload, Duration delay) {
		return send(DelayMessage.builder(topic, payload).delay(DelayMessage.checkDelay(delay)).build());
	}

	/**
	 * Sends a message due at an absolute instant; an instant in the past means due at
	 * once.
	 * @param topic the topic
	 * @param payload the payload
	 * @param dueAt at most ten years from now
	 * @return the generated id and the due time
	 * @throws InvalidMessageException if an argument is not acceptable; nothing is stored
	 */
	public SendResult sendAt(String topic, Object payload, Instant dueAt) {
		if (dueAt == null) {
			throw new InvalidMessageException("Due time must not be null");
		}
		return send(DelayMessage.builder(topic, payload).dueAt(dueAt).build());
	}

	/**
	 * Sends a message. A message whose id is still pending or in flight is not changed
	 * and the result says {@link SendResult#duplicate()}.
	 * @param message the message
	 * @return the id, the due time and whether it was a duplicate
	 * @throws InvalidMessageException if the message is not acceptable; nothing is stored
	 * @throws UnsupportedOperationException if the message has a group and its topic is
	 * spread over more than one partition; nothing is stored
	 * @throws SendFailedException if Redis failed or did not answer within
	 * {@code delay-queue.producer.send-timeout}: the message may have been stored, and
	 * the exception carries its id
	 */
	public SendResult send(DelayMessage message) {
		if (message == null) {
			throw new InvalidMessageException("Message must not be null");
		}
		Map<String, String> headers = new LinkedHashMap<>(message.headers());
		Observation observation = senderObservation(message.topic(), headers);
		return observation.observe(() -> {
			NewMessage stored = toNewMessage(message, headers);
			if (this.transactionAware && TransactionalSends.canDefer(this)) {
				TransactionalSends.defer(this.store, this.metrics, this, message.topic(), stored);
				return new SendResult(stored.id(), estimatedDueAt(stored), false);
			}
			long start = System.nanoTime();
			SendResult result = store(Map.of(message.topic(), List.of(stored))).get(message.topic()).get(0);
			report(this.metrics, message.topic(), List.of(result), start);
			logSent(message.topic(), result);
			return result;
		});
	}

	/**
	 * Sends a batch of messages, possibly to several topics, in one round trip to Redis.
	 * A batch may send an id to a topic in one group only.
	 * @param messages the messages
	 * @return one result per message, in the same order
	 * @throws InvalidMessageException if any message is not acceptable; nothing is stored
	 * then
	 * @throws UnsupportedOperationException if a message has a group and its topic is
	 * spread over more than one partition; nothing is stored then
	 * @throws SendFailedException if Redis failed or did not answer in time: any subset
	 * of the messages may have been stored, and the exception carries all their ids
	 */
	public List<SendResult> sendAll(List<DelayMessage> messages) {
		Outgoing outgoing = outgoing(messages);
		try {
			if (outgoing.byTopic.isEmpty()) {
				return List.of();
			}
			if (this.transactionAware && TransactionalSends.canDefer(this)) {
				return defer(outgoing);
			}
			long start = System.nanoTime();
			return sent(outgoing, store(outgoing.byTopic), start);
		}
		catch (RuntimeException ex) {
			outgoing.observations.forEach((observation) -> observation.error(ex));
			throw ex;
		}
		finally {
			outgoing.observations.forEach(Observation::stop);
		}
	}

	/**
	 * Sends a message as {@link #send(DelayMessage)} does, without waiting for Redis: the
	 * call is written at once, pipelined with every other send on the connection, and the
	 * future completes when Redis answered. The future may complete on the Redis client's
	 * I/O thread: what depends on it must not block there (use the {@code ...Async}
	 * methods of the future with an executor for that). Inside a transaction the send is
	 * held back until it commits, as with {@code send}, and the future is complete.
	 * @param message the message
	 * @return the id, the due time and whether it was a duplicate; or a failure with a
	 * {@link SendFailedException} if Redis failed or did not answer within
	 * {@code delay-queue.producer.send-timeout}: the message may have been stored, and
	 * the exception carries its id
	 * @throws InvalidMessageException if the message is not acceptable; nothing is stored
	 * @throws UnsupportedOperationException if the message has a group and its topic is
	 * spread over more than one partition; nothing is stored
	 */
	public CompletableFuture<SendResult> sendAsync(DelayMessage message) {
		if (message == null) {
			throw new InvalidMessageException("Message must not be null");
		}
		return sendAllAsync(List.of(message)).thenApply((results) -> results.get(0));
	}

	/**
	 * Sends a batch of messages as {@link #sendAll(List)} does, without waiting for
	 * Redis; see {@link #sendAsync(DelayMessage)}.
	 * @param messages the messages
	 * @return one result per message, in the same order; or a failure with a
	 * {@link SendFailedException} if Redis failed or did not answer in time: any subset
	 * of the messages may have been stored, and the exception carries all their ids
	 * @throws InvalidMessageException if any message is not acceptable; nothing is stored
	 * then
	 * @throws UnsupportedOperationException if a message has a group and its topic is
	 * spread over more than one partition; nothing is stored then
	 */
	public CompletableFuture<List<SendResult>> sendAllAsync(List<DelayMessage> messages) {
		Outgoing outgoing = outgoing(messages);
		CompletableFuture<Map<String, List<Sent>>> sent;
		long start = System.nanoTime();
		try {
			if (outgoing.byTopic.isEmpty() || (this.transactionAware && TransactionalSends.canDefer(this))) {
				List<SendResult> deferred = outgoing.byTopic.isEmpty() ? List.of() : defer(outgoing);
				outgoing.observations.forEach(Observation::stop);
				return CompletableFuture.completedFuture(deferred);
			}
			sent = this.store.sendAsync(outgoing.byTopic);
		}
		catch (RuntimeException ex) {
			sent = CompletableFuture.failedFuture(ex);
		}
		return sent.handle((sentByTopic, failure) -> {
			try {
				if (failure != null) {
					throw sendFailed(outgoing.byTopic,
							(failure instanceof CompletionException) ? failure.getCause() : failure);
				}
				return sent(outgoing, results(sentByTopic), start);
			}
			catch (RuntimeException ex) {
				outgoing.observations.forEach((observation) -> observation.error(ex));
				throw ex;
			}
			finally {
				outgoing.observations.forEach(Observation::stop);
			}
		});
	}

	/**
	 * Checks and encodes messages, each with its sender observation started.
	 * @throws InvalidMessageException if any message is not acceptable; the observations
	 * started are then stopped with the error
	 */
	private Outgoing outgoing(List<DelayMessage> messages) {
		if (messages == null) {
			throw new InvalidMessageException("Messages must not be null");
		}
		Outgoing outgoing = new Outgoing(messages, new LinkedHashMap<>(), new ArrayList<>(messages.size()));
		try {
			for (DelayMessage message : messages) {
				if (message == null) {
					throw new InvalidMessageException("Messages must not contain null");
				}
				Map<String, String> headers = new LinkedHashMap<>(message.headers());
				outgoing.observations.add(senderObservation(message.topic(), headers).start());
				outgoing.byTopic.computeIfAbsent(message.topic(), (topic) -> new ArrayList<>())
					.add(toNewMessage(message, headers));
			}
			requireOneGroupPerId(messages);
			return outgoing;
		}
		catch (RuntimeException ex) {
			outgoing.observations.forEach((observation) -> observation.error(ex).stop());
			throw ex;
		}
	}

	/** Holds messages back until the transaction commits. */
	private List<SendResult> defer(Outgoing outgoing) {
		List<SendResult> deferred = new ArrayList<>(outgoing.messages.size());
		Map<String, Iterator<NewMessage>> pending = new LinkedHashMap<>();
		outgoing.byTopic.forEach((topic, stored) -> pending.put(topic, stored.iterator()));
		for (DelayMessage message : outgoing.messages) {
			NewMessage stored = pending.get(message.topic()).next();
			TransactionalSends.defer(this.store, this.metrics, this, message.topic(), stored);
			deferred.add(new SendResult(stored.id(), estimatedDueAt(stored), false));
		}
		return deferred;
	}

	/**
	 * Reports sent messages and puts their results in the order of the messages.
	 */
	private List<SendResult> sent(Outgoing outgoing, Map<String, List<SendResult>> resultsByTopic, long startNanos) {
		resultsByTopic.forEach((topic, topicResults) -> report(this.metrics, topic, topicResults, startNanos));
		Map<String, Iterator<SendResult>> cursors = new LinkedHashMap<>();
		resultsByTopic.forEach((topic, results) -> cursors.put(topic, results.iterator()));
		List<SendResult> results = new ArrayList<>(outgoing.messages.size());
		for (DelayMessage message : outgoing.messages) {
			SendResult result = cursors.get(message.topic()).next();
			logSent(message.topic(), result);
			results.add(result);
		}
		return results;
	}

	/**
	 * @return the largest payload a send accepts, in bytes after conversion
	 */
	public long maxPayloadBytes() {
		return this.maxPayloadBytes;
	}

	/**
	 * Cancels a pending message. It runs after every earlier send of the id by this
	 * application; inside a transaction in which this template holds sends of the id
	 * until the commit, it drops those sends instead.
	 * @param topic the topic, or a topic's dead-letter queue {@code <topic>#dead}
	 * @param messageId the message id
	 * @return {@code true} iff the message was still pending (scheduled or ready) and is
	 * now gone, or its send held until the commit is dropped; {@code false} if it is
	 * unknown, already handled, dead or in flight
	 */
	public boolean cancel(String topic, String messageId) {
		Topics.requireValidOrDeadLetters(topic);
		MessageIds.requireValid(messageId);
		// Both: a message of the id may be stored already as well as held (a replacing
		// send held, or one sent before the transaction).
		boolean held = this.transactionAware && TransactionalSends.cancelHeld(this, topic, messageId);
		boolean cancelled = this.store.cancel(topic, messageId) | held;
		if (cancelled) {
			this.metrics.cancelled(topic);
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + topic + "' message " + messageId
					+ (cancelled ? " cancelled" : " not pending, not cancelled"));
		}
		return cancelled;
	}

	/**
	 * Gives a pending message a new due time: the Redis server's clock plus the delay. It
	 * runs after every earlier send of the id by this application; inside a transaction
	 * in which this template holds sends of the id until the commit, it gives those sends
	 * the delay instead (from the Redis time of the send at commit).
	 * @param topic the topic, or a topic's dead-letter queue {@code <topic>#dead}
	 * @param messageId the message id
	 * @param delay zero or positive, at most ten years
	 * @return {@code true} iff the message was pending (scheduled or ready) and now has
	 * the new due time, or its send held until the commit has the new delay
	 */
	public boolean reschedule(String topic, String messageId, Duration delay) {
		Topics.requireValidOrDeadLetters(topic);
		MessageIds.requireValid(messageId);
		DelayMessage.checkDelay(delay);
		boolean held = this.transactionAware && TransactionalSends.rescheduleHeld(this, topic, messageId, delay);
		if (held && logger.isDebugEnabled()) {
			logger.debug("Topic '" + topic + "' message " + messageId + " held until the commit, now due "
					+ Durations.format(delay) + " after it");
		}
		// Both: a message of the id may be stored already as well as held.
		long due = this.store.reschedule(topic, messageId, delay);
		if (due >= 0 || held) {
			this.metrics.rescheduled(topic);
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + topic + "' message " + messageId
					+ ((due >= 0) ? " rescheduled to " + Instant.ofEpochMilli(due) : " not pending, not rescheduled"));
		}
		return due >= 0 || held;
	}

	private Observation senderObservation(String topic, Map<String, String> headers) {
		return DelayQueueObservation.SEND.observation(this.observationConvention,
				DefaultDelayQueueSenderObservationConvention.INSTANCE,
				() -> new DelayQueueSenderContext(topic, headers), this.observationRegistry);
	}

	private NewMessage toNewMessage(DelayMessage message, Map<String, String> headers) {
		String group = message.group();
		byte[] payload = this.payloadConverter.toBytes(message.payload());
		long size = payload.length + headerBytes(headers);
		if (size > this.maxPayloadBytes) {
			throw new InvalidMessageException("Message for topic '" + message.topic() + "' is " + size
					+ " bytes (payload " + payload.length + " bytes, headers " + (size - payload.length) + " bytes), "
					+ "more than delay-queue.max-payload-size (" + this.maxPayloadBytes + " bytes)");
		}
		Map<String, String> stored = headers;
		Duration deduplicationWindow = message.deduplicationWindow();
		if (message.priority() > 0 || deduplicationWindow != null || group != null) {
			stored = new LinkedHashMap<>(headers);
			if (message.priority() > 0) {
				// The priority travels with the message too, for the listener's Delivery.
				stored.put(MessageFormat.PRIORITY_HEADER, Integer.toString(message.priority()));
			}
			if (deduplicationWindow != null) {
				// Read by the ack script, which remembers the id that long.
				stored.put(MessageFormat.DEDUPLICATION_HEADER, Long.toString(deduplicationWindow.toMillis()));
			}
			if (group != null) {
				// Kept by a dead letter, whose replay puts it back in its group.
				stored.put(MessageFormat.GROUP_HEADER, group);
			}
		}
		byte[] body = MessageFormat.encodeBody(stored, payload);
		String id = (message.id() != null) ? message.id() : this.idGenerator.next();
		NewMessage created = (message.dueAt() != null) ? NewMessage.dueAt(id, message.dueAt(), body)
				: NewMessage.afterDelay(id, (message.delay() != null) ? message.delay() : Duration.ZERO, body);
		created = created.withPriority(message.priority());
		created = (deduplicationWindow != null) ? created.deduplicating() : created;
		created = (group != null) ? created.inGroup(group) : created;
		return message.replaceIfPending() ? created.replacingPending() : created;
	}

	/**
	 * Refuses a batch that sends one id to a topic in two groups, or in a group and in
	 * none: where groups choose the partition, they would be two messages.
	 */
	private static void requireOneGroupPerId(List<DelayMessage> messages) {
		if (messages.stream().allMatch((message) -> message.group() == null)) {
			return;
		}
		Map<String, Map<String, Optional<String>>> groupsByTopic = new HashMap<>();
		for (DelayMessage message : messages) {
			String id = message.id();
			if (id == null) {
				continue;
			}
			Optional<String> group = Optional.ofNullable(message.group());
			Optional<String> earlier = groupsByTopic.computeIfAbsent(message.topic(), (topic) -> new HashMap<>())
				.putIfAbsent(id, group);
			if (earlier != null && !earlier.equals(group)) {
				throw new InvalidMessageException("Message id '" + id + "' is sent to topic '" + message.topic()
						+ "' twice in one batch, " + inGroup(earlier) + " and " + inGroup(group)
						+ ": a batch may send an id in one group only");
			}
		}
	}

	private static String inGroup(Optional<String> group) {
		return group.map((name) -> "in group '" + name + "'").orElse("in no group");
	}

	private static long headerBytes(Map<String, String> headers) {
		long bytes = 0;
		for (Map.Entry<String, String> header : headers.entrySet()) {
			bytes += header.getKey().getBytes(StandardCharsets.UTF_8).length
					+ header.getValue().getBytes(StandardCharsets.UTF_8).length;
		}
		return bytes;
	}

	/**
	 * Sends messages through the store, turning a Redis failure into an exception that
	 * carries their ids: Redis may have stored them.
	 */
	private Map<String, List<SendResult>> store(Map<String, List<NewMessage>> byTopic) {
		try {
			return results(this.store.send(byTopic));
		}
		catch (DataAccessException | PartitionCountException ex) {
			throw sendFailed(byTopic, ex);
		}
	}

	/**
	 * @return the failure of a send to the store: a {@link SendFailedException} that
	 * carries the ids for a failure of the store, which may have stored them; else the
	 * failure itself
	 */
	private static RuntimeException sendFailed(Map<String, List<NewMessage>> byTopic, Throwable failure) {
		if (failure instanceof DataAccessException || failure instanceof PartitionCountException) {
			List<String> ids = byTopic.values().stream().flatMap(List::stream).map(NewMessage::id).toList();
			return new SendFailedException(List.copyOf(byTopic.keySet()), ids, failure);
		}
		return (failure instanceof RuntimeException runtime) ? runtime : new CompletionException(failure);
	}

	static Map<String, List<SendResult>> results(Map<String, List<Sent>> sentByTopic) {
		Map<String, List<SendResult>> results = new LinkedHashMap<>();
		sentByTopic.forEach((topic, sent) -> results.put(topic,
				sent.stream()
					.map((one) -> new SendResult(one.id(), Instant.ofEpochMilli(one.dueAtMillis()), one.duplicate(),
							one.replaced()))
					.toList()));
		return results;
	}

	static void report(DelayQueueMetrics metrics, String topic, List<SendResult> results, long startNanos) {
		int duplicates = (int) results.stream().filter(SendResult::duplicate).count();
		int replaced = (int) results.stream().filter(SendResult::replaced).count();
		metrics.sent(topic, results.size() - duplicates - replaced, replaced, duplicates,
				Duration.ofNanos(System.nanoTime() - startNanos));
	}

	private static Instant estimatedDueAt(NewMessage message) {
		return message.relative() ? Instant.now().plusMillis(message.when()) : Instant.ofEpochMilli(message.when());
	}

	/**
	 * Messages on their way to the store: as given, by topic, and their sender
	 * observations.
	 */
	private record Outgoing(List<DelayMessage> messages, Map<String, List<NewMessage>> byTopic,
			List<Observation> observations) {
	}

	private static void logSent(String topic, SendResult result) {
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + topic + "' message " + result.id()
					+ (result.duplicate() ? " already pending, send ignored"
							: (result.replaced() ? " replaced, now due " : " scheduled for ") + result.dueAt()));
		}
	}

}
