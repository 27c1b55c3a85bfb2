package io.github.delayqueue.actuate;

import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageDescriptor;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.Failures;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.TopicInspector;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;

import static io.github.delayqueue.actuate.DelayQueueEndpoint.MAX_PAYLOAD_BYTES;

/**
 * One message as the {@code delayqueue} endpoint reads it, in whatever state it is: the
 * start of what is stored, enough for its headers and the payload bytes shown; the whole
 * of it once when its headers are longer, never more than
 * {@link MessageSnapshot#MAX_READ_BYTES}.
 */
final class MessageInspection {

	/**
	 * Stored bytes read beyond the payload bytes shown, for the message's header and
	 * headers.
	 */
	private static final int HEADERS_ALLOWANCE = 16 * 1024;

	private final MessageStore store;

	/**
	 * Creates the inspection.
	 * @param store the Redis store
	 */
	MessageInspection(MessageStore store) {
		this.store = store;
	}

	/**
	 * Reads one message.
	 * @param topic the topic
	 * @param id the message id
	 * @return the message, or {@code null} if the topic has no message with that id
	 * @throws InvalidEndpointRequestException for an invalid topic
	 * @throws DataAccessException if Redis cannot be read within the store's timeout,
	 * naming the partition that holds the message and its primary
	 */
	@Nullable MessageDescriptor read(String topic, String id) {
		EndpointErrors.requireTopic(topic);
		TopicInspector inspector = this.store.inspector(topic);
		MessageSnapshot snapshot;
		try {
			snapshot = inspector.inspect(id, MAX_PAYLOAD_BYTES + HEADERS_ALLOWANCE);
		}
		catch (DataAccessException ex) {
			// Name the partition that holds the message and its primary.
			String partition = this.store.partitions().nameFor(topic, id);
			String server = inspector.serverOf(partition);
			throw new DataAccessResourceFailureException("Message '" + id + "' of topic '" + topic + "' (partition '"
					+ partition + "'" + ((server != null) ? " on primary " + server : "") + ") could not be read: "
					+ Failures.describe(ex), ex);
		}
		if (snapshot == null) {
			return null;
		}
		if (snapshot.tooLongToRead()) {
			return MessageReplies.tooLong(topic, snapshot);
		}
		StoredMessage message;
		try {
			message = MessageFormat.decode(id, snapshot.storedPrefix());
		}
		catch (CorruptMessageException ex) {
			if (snapshot.complete()) {
				return MessageReplies.corrupt(topic, snapshot, ex.getMessage());
			}
			// Headers longer than the allowance: read the whole message once, at most
			// MessageSnapshot.MAX_READ_BYTES (a longer one is not read at all).
			MessageSnapshot whole = inspector.inspect(id,
					(int) Math.min(snapshot.storedLength(), MessageSnapshot.MAX_READ_BYTES));
			if (whole == null) {
				return null;
			}
			snapshot = whole;
			try {
				message = MessageFormat.decode(id, snapshot.storedPrefix());
			}
			catch (CorruptMessageException again) {
				return MessageReplies.corrupt(topic, snapshot, again.getMessage());
			}
		}
		long payloadSize = snapshot.storedLength() - (snapshot.storedPrefix().length - message.payload().length);
		return MessageReplies.of(topic, snapshot, message, payloadSize);
	}

}
