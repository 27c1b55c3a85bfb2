package io.github.delayqueue.actuate;

import java.util.List;

import io.github.delayqueue.actuate.DelayQueueEndpoint.ActionResult;
import io.github.delayqueue.actuate.EndpointActions.MessageRequest;
import io.github.delayqueue.actuate.EndpointActions.TopicRequest;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.ReplayResult;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

import static io.github.delayqueue.actuate.DelayQueueEndpoint.BATCH_SIZE;

/**
 * The endpoint's actions on dead letters: replay (back to the schedule, due now, attempts
 * reset) or purge (deleted) one of them, or a topic's, oldest first, in batches of
 * {@value DelayQueueEndpoint#BATCH_SIZE}.
 */
final class DeadLetterActions {

	private final MessageStore store;

	/**
	 * Creates the actions.
	 * @param store the Redis store
	 */
	DeadLetterActions(MessageStore store) {
		this.store = store;
	}

	/**
	 * {@code replay-dead}: replays the topic's dead letters, all that are dead when the
	 * call starts unless a limit is given.
	 * @param request the topic and limit
	 * @return what was done
	 */
	ActionResult replayAll(TopicRequest request) {
		String topic = request.topic();
		long budget = budget(topic, request.limit());
		long replayed = 0;
		long skipped = 0;
		while (replayed + skipped < budget) {
			int batch = (int) Math.min(BATCH_SIZE, budget - replayed - skipped);
			ReplayResult result = this.store.replayDead(topic, batch, skipped);
			replayed += result.replayed().size();
			skipped += result.skipped();
			if (result.replayed().size() + result.skipped() < batch) {
				break;
			}
		}
		String detail = replayed + " dead letters replayed, due now"
				+ ((skipped > 0) ? "; " + skipped + " left dead (id sent anew since, or unreadable)" : "");
		return new ActionResult(topic, null, "replay-dead", replayed, detail);
	}

	/**
	 * {@code purge-dead}: deletes the topic's dead letters, all that are dead when the
	 * call starts unless a limit is given.
	 * @param request the topic and limit
	 * @return what was done
	 */
	ActionResult purgeAll(TopicRequest request) {
		String topic = request.topic();
		long budget = budget(topic, request.limit());
		long purged = 0;
		while (purged < budget) {
			int batch = (int) Math.min(BATCH_SIZE, budget - purged);
			long deleted = this.store.purgeDead(topic, batch);
			purged += deleted;
			if (deleted < batch) {
				break;
			}
		}
		return new ActionResult(topic, null, "purge-dead", purged, purged + " dead letters deleted");
	}

	/**
	 * {@code replay}: replays one dead letter.
	 * @param request the message
	 * @return what was done
	 */
	ActionResult replay(MessageRequest request) {
		ReplayResult result = this.store.replayDead(request.topic(), List.of(request.id()));
		boolean replayed = !result.replayed().isEmpty();
		return new ActionResult(request.topic(), request.id(), "replay", replayed ? 1 : 0,
				replayed ? "replayed, due now" : "not replayed: not dead, sent anew under the same id, or unreadable");
	}

	/**
	 * {@code purge}: deletes one dead letter.
	 * @param request the message
	 * @return what was done
	 */
	ActionResult purge(MessageRequest request) {
		boolean purged = this.store.purgeDead(request.topic(), List.of(request.id())) > 0;
		return new ActionResult(request.topic(), request.id(), "purge", purged ? 1 : 0,
				purged ? "deleted" : "not dead: unchanged");
	}

	private long budget(String topic, @Nullable Long limit) {
		if (limit != null && limit < 0) {
			throw new InvalidEndpointRequestException("limit must be 0 or more", "Bad limit");
		}
		long dead = this.store.inspector(topic).stats().dead();
		return (limit != null) ? Math.min(limit, dead) : dead;
	}

}
