package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.HashSet;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

/**
 * What one topic of the queue should hold, by the rules written in the header of each
 * script, for {@link StateMachineModelTests}. One method per script: it takes the
 * request, changes the model as the script's documented rule says and returns the reply
 * the script should give.
 * <p>
 * The model knows every due time and lease deadline: due times it chose itself, and those
 * that the Redis clock sets (a relative send, retry, reschedule, replay, a claim's lease
 * deadline and the time a message died) are observed from the reply or the stored data
 * and handed in. Whether something is due or expired is decided against {@code now}, the
 * Redis time read just before the request: the test keeps every due time and deadline
 * either in the past or an hour or more away, so that the decision never depends on the
 * few milliseconds between that read and the script.
 */
final class QueueModel {

	/** Most ids a claim looks at in one call, as {@code claim.lua}. */
	static final int CLAIM_LOOK_LIMIT = 1000;

	/** Most ids at the head of the ready list that {@code stats.lua} looks at. */
	static final int STATS_READY_LOOKUP = 100;

	/** The live states of a stored message. */
	enum State {

		SCHEDULED, READY, IN_FLIGHT

	}

	/** The due time of a send refused because its id is remembered: not modelled. */
	static final long REMEMBERED_DUE = -2;

	/** The most ids the model's store remembers ({@code rememberAtMost}). */
	static final int MAX_REMEMBERED = 3;

	/**
	 * A body in the stored format with some headers and a deduplication window.
	 * @param headers how many headers
	 * @param payload the payload
	 * @param window the window in ms
	 * @return the body
	 */
	static String encodedBody(int headers, String payload, long window) {
		return encodedBody(headers, payload, window, null);
	}

	/**
	 * A body in the stored format with some headers, a deduplication window (none for a
	 * negative one) and the group header (as the producer writes it) for a message of a
	 * group.
	 * @param headers how many headers
	 * @param payload the payload
	 * @param window the window in ms, or a negative number for none
	 * @param group the group, or {@code null}
	 * @return the body
	 */
	static String encodedBody(int headers, String payload, long window, @Nullable String group) {
		Map<String, String> named = new LinkedHashMap<>();
		for (int i = 0; i < headers; i++) {
			named.put("h" + i, "v:" + i);
		}
		if (group != null) {
			named.put(MessageFormat.GROUP_HEADER, group);
		}
		if (window >= 0) {
			named.put(MessageFormat.DEDUPLICATION_HEADER, Long.toString(window));
		}
		return new String(MessageFormat.encodeBody(named, payload.getBytes(StandardCharsets.UTF_8)),
				StandardCharsets.UTF_8);
	}

	/**
	 * A body in the stored format with some headers.
	 * @param headers how many headers
	 * @param payload the payload
	 * @return the body
	 */
	static String encodedBody(int headers, String payload) {
		Map<String, String> named = new LinkedHashMap<>();
		for (int i = 0; i < headers; i++) {
			named.put("h" + i, "v:" + i);
		}
		return new String(MessageFormat.encodeBody(named, payload.getBytes(StandardCharsets.UTF_8)),
				StandardCharsets.UTF_8);
	}

	/**
	 * A body with its error header set, after the other headers, or removed for "" (as
	 * with_error.lua does); a body not in the stored format as it is.
	 */
	static String withError(String body, String error) {
		StoredMessage message;
		try {
			message = MessageFormat.decode("model", ("0:0:" + body).getBytes(StandardCharsets.UTF_8));
		}
		catch (CorruptMessageException ex) {
			return body;
		}
		Map<String, String> headers = new LinkedHashMap<>(message.headers());
		headers.remove(MessageFormat.ERROR_HEADER);
		if (!error.isEmpty()) {
			headers.put(MessageFormat.ERROR_HEADER, error);
		}
		return new String(MessageFormat.encodeBody(headers, message.payload()), StandardCharsets.UTF_8);
	}

	/** A stored (live) message. */
	static final class Live {

		final String id;

		String body;

		State state = State.SCHEDULED;

		int attempts;

		long due;

		/** The lookahead of the promotion that made it ready last. */
		long lookahead;

		String token;

		long deadline;

		Live(String id, String body, long due) {
			this.id = id;
			this.body = body;
			this.due = due;
		}

		String stored() {
			return this.attempts + ":" + this.due + ":" + this.body;
		}

		@Override
		public String toString() {
			return this.id + "[" + this.state + ", attempts " + this.attempts + ", due " + this.due
					+ ((this.state == State.IN_FLIGHT) ? ", token " + this.token + ", deadline " + this.deadline : "")
					+ "]";
		}

	}

	/**
	 * A dead letter queued in the dead-letter queue.
	 *
	 * @param id its id on the topic
	 * @param stored the stored message as it died, {@code <attempts>:<due>:<body>}
	 * @param error its last error
	 * @param priority the priority it had, 0 for none: the queue's ready list it is on
	 */
	record Queued(String id, String stored, String error, int priority) {
	}

	/**
	 * A dead letter, under its id or, once the id died again, under its buried name.
	 *
	 * @param stored the stored message, {@code <attempts>:<due>:<body>}
	 * @param error the last error
	 * @param diedAt the time it died (Redis clock), -1 until observed
	 */
	record Dead(String stored, String error, long diedAt) {

		Dead withDiedAt(long time) {
			return new Dead(this.stored, this.error, time);
		}

	}

	/**
	 * A consumer's last claim that leased messages, as {@code claim.lua} records it.
	 *
	 * @param token the claim's lease token
	 * @param deadline its lease deadline
	 * @param ids the ids it leased, in order
	 */
	record ClaimRecord(String token, long deadline, List<String> ids) {
	}

	/**
	 * What a send should report for one message.
	 *
	 * @param duplicate whether it is reported as a duplicate
	 * @param replaced whether it is reported as having replaced a scheduled message
	 * @param due the due time reported
	 */
	record SendReply(boolean duplicate, boolean replaced, long due) {
	}

	/**
	 * What a claim should return.
	 *
	 * @param ids the ids leased (or, for a request sent again, leased then and still
	 * held)
	 * @param stored their stored messages, in the same order
	 * @param more whether more ids may be waiting
	 * @param replayed whether the request was answered from the consumer's claim record
	 */
	record ClaimReply(List<String> ids, List<String> stored, boolean more, boolean replayed) {
	}

	/**
	 * What a lease expiry should return.
	 *
	 * @param requeued ids made ready again
	 * @param deadLettered ids dead-lettered
	 */
	record ExpiryReply(List<String> requeued, List<String> deadLettered) {
	}

	/**
	 * What a replay should return.
	 *
	 * @param replayed ids replayed, in request order
	 * @param skipped ids left dead or not found
	 */
	record ReplayReply(List<String> replayed, int skipped) {
	}

	/** id → stored message: scheduled, ready and in flight (the messages hash). */
	final Map<String, Live> live = new TreeMap<>();

	/**
	 * The ready list, oldest first, with the stale ids that cancel and reschedule leave
	 * in it.
	 */
	final List<String> ready = new ArrayList<>();

	/**
	 * The ready list of each priority from 1 up (index 0 is {@link #ready}), with their
	 * stale ids too.
	 */
	final List<List<String>> readyLists = new ArrayList<>(List.of(this.ready));

	/**
	 * id → priority above 0 of a stored message (the priorities hash), whatever its live
	 * state.
	 */
	final Map<String, Integer> priorities = new TreeMap<>();

	/**
	 * id or buried name → priority above 0 of a dead letter (the dead priorities hash),
	 * apart from the priority of a new message of its id.
	 */
	final Map<String, Integer> deadPriorities = new TreeMap<>();

	/** id or buried name → dead letter. */
	final Map<String, Dead> dead = new TreeMap<>();

	/**
	 * The partition's schedules: name → {@code <next tick>:<paused>:<definition>}.
	 */
	final Map<String, String> schedules = new TreeMap<>();

	/**
	 * Whether the topic's dead letters are listened to: each message that dies is then
	 * also queued in its dead-letter queue.
	 */
	boolean watchingDeadLetters;

	/**
	 * The dead letters queued in the dead-letter queue, in the order they were queued
	 * (each on the ready list of its priority) (nothing consumes them here).
	 */
	final List<Queued> queuedDeadLetters = new ArrayList<>();

	{
		for (int priority = 1; priority <= Script.MAX_PRIORITY; priority++) {
			this.readyLists.add(new ArrayList<>());
		}
	}

	/** consumer → its last claim that leased messages. */
	final Map<String, ClaimRecord> claimRecords = new HashMap<>();

	/**
	 * Ids (or the names they were delivered under, such as a replayed
	 * {@code <id>~<time>}) whose message with a deduplication window was acknowledged,
	 * with the end of the window as the model places it: the Redis time when the
	 * acknowledging call was sent, plus the window (ms). ack.lua scores by the script's
	 * own time, which lies between that and the reply's; see
	 * {@link #ack(List, List, long)} for why the order holds.
	 */
	final Map<String, Long> remembered = new HashMap<>();

	/**
	 * The order in which ack.lua forgets remembered ids past the bound: ZPOPMIN, the
	 * soonest-ending window first and, of windows that end in the same millisecond, the
	 * name that sorts first.
	 */
	private static final Comparator<Map.Entry<String, Long>> FORGOTTEN_FIRST = Map.Entry
		.<String, Long>comparingByValue()
		.thenComparing(Map.Entry.comparingByKey());

	/**
	 * How many remembered names the bound forgot while another name of their id (an id
	 * and an earlier dead letter of it replayed as {@code <id>~<time>}) stayed.
	 */
	int forgottenBesideANameOfTheirId;

	/** Whether a send with a deduplication window has set the topic's bound. */
	boolean deduplicating;

	/**
	 * How many ids of ready messages claims dropped from the list of another priority
	 * than the message's.
	 */
	int droppedOfAnotherPriority;

	/**
	 * How many due messages of groups claims found in a ready list and put in their
	 * groups.
	 */
	int joinedFromLists;

	/**
	 * How many messages of groups went back to their group: released, expired or replayed
	 * into one.
	 */
	int backInGroup;

	/**
	 * id → group of a stored message sent with one (the groups hash): kept while it is
	 * scheduled, ready or in flight, dropped by ack, cancel and dead-lettering, restored
	 * by a replay from the body's group header.
	 */
	final Map<String, String> groups = new TreeMap<>();

	/**
	 * The group ready set: the member of each ready message of a group (see
	 * {@link #groupMember}), with the stale members that a cancel or a reschedule of a
	 * ready message leaves there until a claim looks at them. A claim served by the
	 * rotation is not modelled member by member: the test checks what it removed and
	 * takes the set from Redis.
	 */
	final TreeSet<String> groupReady = new TreeSet<>();

	/**
	 * The ids whose strict-order wait in their group has not ended (retry.lua's
	 * {@code \u0001<id>} entries of the group waits, for a retry with a backoff: an hour
	 * here, so none ends within a run); left by everything but a replacing send, a cancel
	 * and a reschedule of the message, which remove the entry.
	 */
	final Set<String> waiting = new HashSet<>();

	/**
	 * The member of a ready message of a group, as include/group_member.lua makes it.
	 * @param group the group
	 * @param priority its priority, 0 for none
	 * @param due its due time
	 * @param id its id
	 * @return {@code <group>\0<9 - priority><due in 13 digits>\0<id>}
	 */
	static String groupMember(String group, int priority, long due, String id) {
		return group + "\0" + (9 - priority) + String.format("%013d", Math.max(0, due)) + "\0" + id;
	}

	/**
	 * @param member a member of the group ready set
	 * @return its group
	 */
	static String groupOfMember(String member) {
		return member.substring(0, member.indexOf('\0'));
	}

	/**
	 * @param member a member of the group ready set
	 * @return its id
	 */
	static String idOfMember(String member) {
		return member.substring(member.indexOf('\0') + 16);
	}

	/**
	 * @param member a member of the group ready set
	 * @return the due time in it
	 */
	static long dueOfMember(String member) {
		int at = member.indexOf('\0');
		return Long.parseLong(member.substring(at + 2, at + 15));
	}

	/**
	 * The member a stored message of a group has while it is ready: of its group, its
	 * priority and its due time.
	 * @param id the id of a stored message of a group
	 * @return its member
	 */
	String memberOf(String id) {
		return groupMember(this.groups.get(id), this.priorities.getOrDefault(id, 0), this.live.get(id).due, id);
	}

	/**
	 * Whether a member of the group ready set stands for a ready message that a claim
	 * would take: the message is ready, in that group, with that rank (else the member is
	 * stale: claim drops it).
	 * @param member the member
	 * @return whether it is valid
	 */
	boolean validMember(String member) {
		String id = idOfMember(member);
		Live message = this.live.get(id);
		return message != null && message.state == State.READY && this.groups.containsKey(id)
				&& memberOf(id).equals(member);
	}

	/**
	 * Makes a stored message of a group ready: its member joins the group ready set.
	 */
	private void joinGroup(Live message) {
		if (message.state == State.IN_FLIGHT) {
			this.backInGroup++;
		}
		message.state = State.READY;
		this.groupReady.add(memberOf(message.id));
	}

	/**
	 * Whether a claim is served by the rotation (claim.lua: the topic uses groups and a
	 * group has ready messages), which the model does not predict member by member;
	 * {@code false} for a claim request sent again, which the record answers.
	 * @param consumer the consumer
	 * @param token the claim's token
	 * @return whether the rotation serves it
	 */
	boolean servesRotation(String consumer, String token) {
		ClaimRecord record = this.claimRecords.get(consumer);
		if (record != null && record.token().equals(token)) {
			return false;
		}
		return !this.groupReady.isEmpty();
	}

	/**
	 * Applies a claim served by the rotation, as the test observed it: the ids leased go
	 * in flight, the consumer's record is the claim's. The ready lists and the group
	 * ready set are set by the caller from Redis, once checked.
	 * @param consumer the consumer
	 * @param token the claim's token
	 * @param ids the ids leased, in order
	 * @param deadline their lease deadline
	 * @return their stored messages, in order
	 */
	List<String> claimedByRotation(String consumer, String token, List<String> ids, long deadline) {
		List<String> stored = new ArrayList<>();
		for (String id : ids) {
			Live message = this.live.get(id);
			message.state = State.IN_FLIGHT;
			message.token = token;
			message.deadline = deadline;
			stored.add(message.stored());
		}
		if (ids.isEmpty()) {
			this.claimRecords.remove(consumer);
		}
		else {
			this.claimRecords.put(consumer, new ClaimRecord(token, deadline, List.copyOf(ids)));
		}
		return stored;
	}

	// send.lua: an id already stored is left as it is, unless the send replaces a
	// scheduled one; the same body again is not a duplicate, unless the send was to
	// replace (a ready or in-flight message is never replaced: always a duplicate), but
	// for a message that waits in its group (strict order): its wait not ended, ready in
	// a group with its member in place; it is then replaced and scheduled, its member
	// left stale, its wait ended.
	// A message stored or replaced takes the priority sent; without one, it loses its
	// entry (also one given earlier in the same call).
	// A new message of a group that is due when sent is ready in its group at once.
	// An id not stored and still remembered is not stored again (its due time, the end of
	// its window, is not modelled: REMEMBERED_DUE).
	List<SendReply> send(List<NewMessage> messages, List<Long> dues, List<Boolean> dueWhenSent) {
		List<SendReply> replies = new ArrayList<>();
		for (int i = 0; i < messages.size(); i++) {
			NewMessage message = messages.get(i);
			// A new message of a group due when sent is ready in its group at once.
			boolean readyAtOnce = this.live.get(message.id()) == null && !this.remembered.containsKey(message.id())
					&& message.group() != null && dueWhenSent.get(i);
			String body = new String(message.body());
			Live stored = this.live.get(message.id());
			this.deduplicating |= message.deduplicated();
			if (stored == null && this.remembered.containsKey(message.id())) {
				replies.add(new SendReply(true, false, REMEMBERED_DUE));
				continue;
			}
			boolean waitsInGroup = stored != null && stored.state == State.READY && this.waiting.contains(message.id())
					&& this.groups.containsKey(message.id()) && this.groupReady.contains(memberOf(message.id()));
			if (stored != null && message.replaceIfPending() && (stored.state == State.SCHEDULED || waitsInGroup)) {
				stored.body = body;
				stored.due = dues.get(i);
				stored.state = State.SCHEDULED;
				if (waitsInGroup) {
					this.waiting.remove(message.id());
				}
				replies.add(new SendReply(false, true, stored.due));
			}
			else if (stored != null) {
				replies.add(new SendReply(message.replaceIfPending() || !stored.body.equals(body), false, stored.due));
				continue;
			}
			else {
				this.live.put(message.id(), new Live(message.id(), body, dues.get(i)));
				replies.add(new SendReply(false, false, dues.get(i)));
			}
			if (message.priority() > 0) {
				this.priorities.put(message.id(), message.priority());
			}
			else {
				this.priorities.remove(message.id());
			}
			if (message.group() != null) {
				this.groups.put(message.id(), message.group());
			}
			else {
				this.groups.remove(message.id());
			}
			if (readyAtOnce) {
				joinGroup(this.live.get(message.id()));
			}
		}
		return replies;
	}

	/**
	 * The ready list an id goes to: the list of its priority while the topic uses
	 * priorities, else the ready list.
	 * @param id the id
	 * @return the list
	 */
	List<String> readyListOf(String id) {
		return this.priorities.isEmpty() ? this.ready : this.readyLists.get(this.priorities.getOrDefault(id, 0));
	}

	/**
	 * The ready lists as claim reads them: the non-empty lists of priorities 9 down to 1
	 * while the topic uses priorities, then the ready list.
	 * @return the lists, most urgent first
	 */
	List<List<String>> listsToRead() {
		return prioritiesToRead().stream().map(this.readyLists::get).toList();
	}

	/**
	 * Whether claim reads the ready lists of priorities (ready_lists.lua): while the
	 * priorities hash or a list of a priority is not empty.
	 * @return whether the lists of priorities are read
	 */
	boolean readsPriorities() {
		return !this.priorities.isEmpty()
				|| this.readyLists.subList(1, this.readyLists.size()).stream().anyMatch((list) -> !list.isEmpty());
	}

	/**
	 * The priorities of the ready lists claim reads, in the order it reads them (see
	 * {@link #listsToRead()}).
	 * @return the priorities, 0 for the ready list
	 */
	List<Integer> prioritiesToRead() {
		List<Integer> priorities = new ArrayList<>();
		if (readsPriorities()) {
			for (int priority = Script.MAX_PRIORITY; priority >= 1; priority--) {
				if (!this.readyLists.get(priority).isEmpty()) {
					priorities.add(priority);
				}
			}
		}
		priorities.add(0);
		return priorities;
	}

	// promote.lua: scheduled ids due by now + lookahead, in due order (then id), to the
	// tail. While the topic uses groups, a message of a group among them moves only once
	// due, into the group ready set; one due within the lookahead stays scheduled (and
	// still counts in the limit: the script reads limit ids, then sorts them).
	int promote(long now, int limit, long lookahead) {
		List<Live> due = scheduled().stream().filter((message) -> message.due <= now + lookahead).limit(limit).toList();
		int moved = 0;
		for (Live message : due) {
			if (this.groups.containsKey(message.id)) {
				if (message.due <= now) {
					message.lookahead = lookahead;
					joinGroup(message);
					moved++;
				}
				continue;
			}
			message.state = State.READY;
			message.lookahead = lookahead;
			readyListOf(message.id).add(message.id);
			moved++;
		}
		return moved;
	}

	// claim.lua, chunk by chunk as the script reads the ready list. While the topic uses
	// priorities, an id in the list of another priority than its message's is dropped:
	// the message has an entry of its own in the list of its priority; one without an
	// entry is the list's when its body's priority header names that list's priority
	// (the lists of priorities are read while one is not empty, also with no entry left).
	// A due message of a group found in a list (made ready there by a version without
	// groups) joins its group; one not yet due is kept.
	ClaimReply claim(long now, String consumer, String token, int limit, int earlyLimit, long deadline) {
		ClaimRecord record = this.claimRecords.get(consumer);
		if (record != null && record.token().equals(token)) {
			List<String> ids = new ArrayList<>();
			List<String> stored = new ArrayList<>();
			for (String id : record.ids()) {
				Live message = this.live.get(id);
				if (message != null && message.state == State.IN_FLIGHT && token.equals(message.token)) {
					ids.add(id);
					stored.add(message.stored());
				}
			}
			return new ClaimReply(ids, stored, false, true);
		}
		ListScan scan = new ListScan(now, limit, earlyLimit);
		List<Integer> listPriorities = prioritiesToRead();
		scan.read(listPriorities, readsPriorities());
		if (scan.looked == 0) {
			this.claimRecords.remove(consumer);
			return new ClaimReply(List.of(), List.of(), false, false);
		}
		for (int l = 0; l < scan.listLooked.size(); l++) {
			List<String> list = this.readyLists.get(listPriorities.get(l));
			list.subList(0, scan.listLooked.get(l)).clear();
			list.addAll(0, scan.listKept.get(l));
		}
		List<String> stored = new ArrayList<>();
		for (String id : scan.taken) {
			Live message = this.live.get(id);
			message.state = State.IN_FLIGHT;
			message.token = token;
			message.deadline = deadline;
			stored.add(message.stored());
		}
		for (String id : scan.joining) {
			this.groupReady.add(memberOf(id));
			this.joinedFromLists++;
		}
		if (scan.taken.isEmpty()) {
			this.claimRecords.remove(consumer);
		}
		else {
			this.claimRecords.put(consumer, new ClaimRecord(token, deadline, List.copyOf(scan.taken)));
		}
		return new ClaimReply(scan.taken, stored,
				(!scan.full && scan.looked >= CLAIM_LOOK_LIMIT) || !scan.joining.isEmpty(), false);
	}

	/**
	 * One claim's reading of the ready lists (see {@link #claim}).
	 */
	private final class ListScan {

		private final long now;

		private final int limit;

		private final int earlyLimit;

		final List<String> taken = new ArrayList<>();

		final Set<String> joining = new LinkedHashSet<>();

		final List<Integer> listLooked = new ArrayList<>();

		final List<List<String>> listKept = new ArrayList<>();

		int claimed;

		int claimedEarly;

		int looked;

		boolean full;

		ListScan(long now, int limit, int earlyLimit) {
			this.now = now;
			this.limit = limit;
			this.earlyLimit = earlyLimit;
		}

		void read(List<Integer> listPriorities, boolean prioritized) {
			for (int priority : listPriorities) {
				List<String> list = QueueModel.this.readyLists.get(priority);
				int at = 0;
				List<String> kept = new ArrayList<>();
				while (!this.full && this.looked < CLAIM_LOOK_LIMIT) {
					int chunk = (this.limit - this.claimed) + Math.min(this.earlyLimit - this.claimedEarly, 16);
					chunk = Math.min(CLAIM_LOOK_LIMIT - this.looked, Math.max(Math.max(chunk, kept.size()), 1));
					List<String> ids = list.subList(Math.min(at, list.size()), Math.min(at + chunk, list.size()));
					if (ids.isEmpty()) {
						break;
					}
					int read = ids.size();
					for (String id : List.copyOf(ids)) {
						Live message = QueueModel.this.live.get(id);
						boolean ready = message != null && message.state == State.READY && !this.taken.contains(id);
						boolean ownList = !prioritized || ownList(id, message, priority);
						if (ready && !ownList) {
							QueueModel.this.droppedOfAnotherPriority++;
						}
						if (ready && ownList && QueueModel.this.groups.containsKey(id)) {
							// A message of a group: it joins its group once due, is
							// kept until then; met twice, dropped.
							if (!this.joining.contains(id) && message.due > this.now) {
								kept.add(id);
							}
							else {
								this.joining.add(id);
							}
						}
						else if (ready && ownList) {
							boolean early = message.due > this.now;
							if (early && this.claimedEarly >= this.earlyLimit) {
								kept.add(id);
							}
							else if (!early && this.claimed >= this.limit) {
								this.full = true;
								break;
							}
							else {
								this.taken.add(id);
								if (early) {
									this.claimedEarly++;
								}
								else {
									this.claimed++;
								}
							}
						}
						this.looked++;
						at++;
					}
					if (read < chunk || this.claimed >= this.limit) {
						break;
					}
				}
				this.listLooked.add(at);
				this.listKept.add(kept);
				if (this.full || this.claimed >= this.limit || this.looked >= CLAIM_LOOK_LIMIT) {
					break;
				}
			}
		}

		private boolean ownList(String id, @Nullable Live message, int listPriority) {
			Integer entry = QueueModel.this.priorities.get(id);
			if (entry != null || listPriority == 0 || message == null) {
				return ((entry != null) ? entry : 0) == listPriority;
			}
			Integer named = priorityHeader(message.body);
			return named != null && named == listPriority;
		}

	}

	/**
	 * The priority header of a body in the stored format, or {@code null}.
	 */
	static @Nullable Integer priorityHeader(String body) {
		try {
			String priority = MessageFormat.decode("model", ("0:0:" + body).getBytes(StandardCharsets.UTF_8))
				.headers()
				.get(MessageFormat.PRIORITY_HEADER);
			return (priority != null) ? Integer.valueOf(priority.trim()) : null;
		}
		catch (CorruptMessageException | NumberFormatException ex) {
			return null;
		}
	}

	// ack.lua: every token is checked before any message is deleted. A message sent
	// with a deduplication window is remembered under the name it was acknowledged as,
	// until the script's time plus the window; sent is the Redis time read just before
	// the call (the script's time is that or later, and before the next call's).
	// Windows differ by hours from id to id, so sent + window orders them as Redis
	// does; of one id's names (m95 and a replayed m95~<time it died>: one window) the
	// one acknowledged by an earlier call ends first, and the names acknowledged by one
	// call end in the same millisecond, where ZPOPMIN takes the name that sorts first
	// (seed 1337031586316, step 750: the model forgot m95~<time>, the one its hash map
	// listed first, while Redis forgot m95, acknowledged five steps earlier). Left: two
	// calls whose scripts ran in one millisecond, the first sent in the one before (a
	// step and its check take longer); ids of ASCII only (the order of Java's strings).
	List<Boolean> ack(List<String> ids, List<String> tokens, long sent) {
		List<Boolean> acked = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			acked.add(holdsLease(ids.get(i), tokens.get(i)));
		}
		for (int i = 0; i < ids.size(); i++) {
			if (acked.get(i)) {
				Live message = this.live.remove(ids.get(i));
				this.priorities.remove(ids.get(i));
				this.groups.remove(ids.get(i));
				// An id named twice is removed once.
				Long window = (message != null && this.deduplicating) ? deduplicationWindow(message.body) : null;
				if (window != null) {
					this.remembered.put(ids.get(i), sent + window);
				}
			}
		}
		// Past the bound, the ids whose windows end first are forgotten.
		while (this.remembered.size() > MAX_REMEMBERED) {
			String first = this.remembered.entrySet().stream().min(FORGOTTEN_FIRST).orElseThrow().getKey();
			this.remembered.remove(first);
			if (this.remembered.keySet().stream().anyMatch((name) -> idOfName(name).equals(idOfName(first)))) {
				this.forgottenBesideANameOfTheirId++;
			}
		}
		return acked;
	}

	/**
	 * The group header of a body in the stored format, when it names a group as
	 * replay.lua takes one (1 to 800 bytes, no control character), or {@code null}.
	 */
	static @Nullable String groupHeader(String body) {
		try {
			String group = MessageFormat.decode("model", ("0:0:" + body).getBytes(StandardCharsets.UTF_8))
				.headers()
				.get(MessageFormat.GROUP_HEADER);
			int bytes = (group != null) ? group.getBytes(StandardCharsets.UTF_8).length : 0;
			return (bytes > 0 && bytes <= 800 && group.chars().noneMatch(Character::isISOControl)) ? group : null;
		}
		catch (CorruptMessageException ex) {
			return null;
		}
	}

	/**
	 * The deduplication window of a body in the stored format, or {@code null}.
	 */
	static @Nullable Long deduplicationWindow(String body) {
		try {
			String window = MessageFormat.decode("model", ("0:0:" + body).getBytes(StandardCharsets.UTF_8))
				.headers()
				.get(MessageFormat.DEDUPLICATION_HEADER);
			return (window != null) ? Long.valueOf(window) : null;
		}
		catch (CorruptMessageException | NumberFormatException ex) {
			return null;
		}
	}

	// retry.lua: in flight -> scheduled at the observed due time, attempts + 1, the error
	// as the body's error header (none for null or "") when the body is in the stored
	// format.
	boolean retry(String id, String token, long due, @Nullable String error) {
		if (!holdsLease(id, token)) {
			return false;
		}
		Live message = this.live.get(id);
		message.body = withError(message.body, (error != null) ? error : "");
		message.attempts++;
		message.due = due;
		message.state = State.SCHEDULED;
		message.token = null;
		return true;
	}

	// retry.lua in strict group order, for a message of a group: in flight -> ready in
	// its group at its rank (its due time kept), attempts + counted and, for a failure,
	// the error as the body's error header; its group waits (checked by the test), and
	// with a backoff so does the message (the group waits key).
	boolean retryInGroup(String id, String token, int counted, @Nullable String error, boolean waits) {
		if (!holdsLease(id, token)) {
			return false;
		}
		Live message = this.live.get(id);
		if (counted > 0) {
			message.body = withError(message.body, (error != null) ? error : "");
			message.attempts += counted;
		}
		message.token = null;
		joinGroup(message);
		if (waits) {
			this.waiting.add(id);
		}
		return true;
	}

	// retry.lua for a slow-down: in flight -> scheduled at the observed due time, with
	// attempts and body unchanged.
	boolean postpone(String id, String token, long due) {
		if (!holdsLease(id, token)) {
			return false;
		}
		Live message = this.live.get(id);
		message.due = due;
		message.state = State.SCHEDULED;
		message.token = null;
		return true;
	}

	// dead_letter.lua: in flight -> dead, attempts + 1, with the error; its priority
	// moves to the dead priorities.
	boolean deadLetter(String id, String token, String error) {
		if (!holdsLease(id, token)) {
			return false;
		}
		Live message = this.live.remove(id);
		message.attempts++;
		this.groups.remove(id);
		bury(id, message.stored(), error, this.priorities.remove(id));
		return true;
	}

	// release.lua: each id whose lease its token holds (an id named twice: its first
	// lease
	// that holds) -> head of the ready list of its priority, in the order given, attempts
	// unchanged.
	List<Boolean> release(List<String> ids, List<String> tokens) {
		List<Boolean> released = new ArrayList<>();
		Map<List<String>, List<String>> heads = new IdentityHashMap<>();
		for (int i = 0; i < ids.size(); i++) {
			String id = ids.get(i);
			boolean holds = holdsLease(id, tokens.get(i));
			released.add(holds);
			if (holds) {
				Live message = this.live.get(id);
				message.token = null;
				if (this.groups.containsKey(id)) {
					// Back in its group at its rank.
					joinGroup(message);
					continue;
				}
				message.state = State.READY;
				heads.computeIfAbsent(readyListOf(id), (list) -> new ArrayList<>()).add(id);
			}
		}
		heads.forEach((list, head) -> list.addAll(0, head));
		return released;
	}

	// release_claim.lua: the ids of the consumer's recorded claim, when it has the token
	// given, still leased to that token -> released as by release.lua, in the order
	// claimed; the record stays. The test only names a claim whose record has not expired
	// (its lease was long), or one the record no longer holds. Without a record, or with
	// one of an earlier claim of the same consumer, the claim has not run: the record
	// becomes the claim's, without ids, so that the claim leases nothing if it runs.
	List<String> releaseClaim(String consumer, String token) {
		ClaimRecord record = this.claimRecords.get(consumer);
		if (record == null || !record.token().equals(token)) {
			if (record == null || isEarlierClaim(record.token(), token)) {
				this.claimRecords.put(consumer, new ClaimRecord(token, 0, List.of()));
			}
			return List.of();
		}
		List<String> held = record.ids().stream().filter((id) -> holdsLease(id, token)).toList();
		release(held, held.stream().map((id) -> token).toList());
		return held;
	}

	private static boolean isEarlierClaim(String recorded, String token) {
		int recordedDot = recorded.lastIndexOf('.');
		int dot = token.lastIndexOf('.');
		if (recordedDot < 0 || dot < 0 || !recorded.substring(0, recordedDot).equals(token.substring(0, dot))) {
			return false;
		}
		try {
			return Long.parseLong(recorded.substring(recordedDot + 1)) < Long.parseLong(token.substring(dot + 1));
		}
		catch (NumberFormatException ex) {
			return false;
		}
	}

	// extend_leases.lua: each lease its token holds gets the observed deadline; the token
	// stays.
	List<Boolean> extendLeases(List<String> ids, List<String> tokens, List<Long> deadlines) {
		List<Boolean> extended = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			boolean holds = holdsLease(ids.get(i), tokens.get(i));
			extended.add(holds);
			if (holds) {
				this.live.get(ids.get(i)).deadline = deadlines.get(i);
			}
		}
		return extended;
	}

	/**
	 * The lease deadline of a message in flight, of which extend_leases.lua gives the
	 * later and the new length from the script's time.
	 * @param id the id
	 * @return its lease deadline now
	 */
	long deadline(String id) {
		return this.live.get(id).deadline;
	}

	// save_schedule.lua: the same definition changes nothing; another one takes the next
	// tick given, paused as it was, only from the state read.
	String saveSchedule(String name, String definition, long next, String read) {
		String state = this.schedules.get(name);
		String paused = "0";
		if (state != null) {
			String[] parts = state.split(":", 3);
			if (parts[2].equals(definition)) {
				return state;
			}
			paused = parts[1];
		}
		if (!((state != null) ? state : "").equals(read)) {
			return "changed meanwhile";
		}
		state = next + ":" + paused + ":" + definition;
		this.schedules.put(name, state);
		return state;
	}

	// advance_schedule.lua: only from the state read; stores each tick's message unless
	// its id is stored.
	boolean advanceSchedule(String name, String read, long next, List<Long> ticks, String body) {
		if (!read.equals(this.schedules.get(name))) {
			return false;
		}
		for (long tick : ticks) {
			this.live.putIfAbsent(name + "~" + tick, new Live(name + "~" + tick, body, tick));
		}
		String[] parts = read.split(":", 3);
		this.schedules.put(name, next + ":" + parts[1] + ":" + parts[2]);
		return true;
	}

	// pause_schedule.lua: pausing keeps the next tick; resuming takes the one given.
	@Nullable String pauseSchedule(String name, boolean paused, long next) {
		String state = this.schedules.get(name);
		if (state == null) {
			return null;
		}
		String[] parts = state.split(":", 3);
		if (parts[1].equals(paused ? "1" : "0")) {
			return state;
		}
		// Resumed, never before the tick it kept (a clock that stepped back).
		String tick = (paused || next <= Long.parseLong(parts[0])) ? parts[0] : Long.toString(next);
		state = tick + ":" + (paused ? "1" : "0") + ":" + parts[2];
		this.schedules.put(name, state);
		return state;
	}

	// remove_schedule.lua: any state, or only the one read
	boolean removeSchedule(String name, @Nullable String read) {
		if (read != null && !read.equals(this.schedules.get(name))) {
			return false;
		}
		return this.schedules.remove(name) != null;
	}

	// expire_leases.lua: leases ended by now, by deadline (then id), at most limit of
	// them.
	ExpiryReply expireLeases(long now, int limit, int maxAttempts) {
		List<Live> expired = this.live.values()
			.stream()
			.filter((message) -> message.state == State.IN_FLIGHT && message.deadline <= now)
			.sorted(Comparator.comparingLong((Live message) -> message.deadline).thenComparing((message) -> message.id))
			.limit(limit)
			.toList();
		List<String> requeued = new ArrayList<>();
		List<String> deadLettered = new ArrayList<>();
		for (Live message : expired) {
			message.attempts++;
			message.token = null;
			if (message.attempts >= maxAttempts) {
				this.live.remove(message.id);
				this.groups.remove(message.id);
				bury(message.id, message.stored(),
						"lease expired on attempt " + message.attempts + " of " + maxAttempts,
						this.priorities.remove(message.id));
				deadLettered.add(message.id);
			}
			else {
				message.body = withError(message.body,
						"lease expired on attempt " + message.attempts + " of " + maxAttempts);
				if (this.groups.containsKey(message.id)) {
					joinGroup(message);
				}
				else {
					message.state = State.READY;
					readyListOf(message.id).add(message.id);
				}
				requeued.add(message.id);
			}
		}
		return new ExpiryReply(requeued, deadLettered);
	}

	// cancel.lua: scheduled or ready -> gone; an id left in the ready list stays there,
	// and so does the member of a ready message of a group in the group ready set.
	boolean cancel(String id) {
		Live message = this.live.get(id);
		if (message == null || message.state == State.IN_FLIGHT) {
			return false;
		}
		this.live.remove(id);
		this.priorities.remove(id);
		this.groups.remove(id);
		this.waiting.remove(id);
		return true;
	}

	// reschedule.lua: scheduled or ready -> scheduled at the observed due time (the
	// member of a ready message of a group stays in the group ready set, stale).
	boolean reschedule(String id, long due) {
		Live message = this.live.get(id);
		if (message == null || message.state == State.IN_FLIGHT) {
			return false;
		}
		message.due = due;
		message.state = State.SCHEDULED;
		this.waiting.remove(id);
		return true;
	}

	/**
	 * Whether reschedule.lua would reschedule the message.
	 * @param id the id
	 * @return whether it is pending
	 */
	boolean pending(String id) {
		Live message = this.live.get(id);
		return message != null && message.state != State.IN_FLIGHT;
	}

	/**
	 * The message id a dead letter's name stands for (id_of_name.lua): the name without
	 * its ends of {@code ~<digits>~*}, one after another.
	 */
	static String idOfName(String name) {
		Matcher matcher = BURIED_NAME.matcher(name);
		while (matcher.matches()) {
			name = matcher.group(1);
			matcher = BURIED_NAME.matcher(name);
		}
		return name;
	}

	private static final Pattern BURIED_NAME = Pattern.compile("^(.+)~\\d+~*$", Pattern.DOTALL);

	// replay.lua: dead -> scheduled, due at the replay's time, attempts 0, error dropped
	// (and the body's error header), unless its id (or, for an earlier dead letter kept
	// as <id>~<time it died>, that id) is remembered,
	// its priority moved back from the dead priorities; skipped
	// while the id is stored again. Reads every id before it moves any; an id named twice
	// counts
	// once (seed 2291508825904, step 101 found it counted twice).
	ReplayReply replay(List<String> named, long now) {
		List<String> ids = named.stream().distinct().toList();
		List<Boolean> replayable = new ArrayList<>();
		for (String id : ids) {
			replayable.add(this.dead.containsKey(id) && !this.live.containsKey(id) && !this.remembered.containsKey(id)
					&& !this.remembered.containsKey(idOfName(id)));
		}
		Map<String, Dead> read = new LinkedHashMap<>();
		ids.forEach((id) -> read.put(id, this.dead.get(id)));
		List<String> replayed = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			String id = ids.get(i);
			if (replayable.get(i)) {
				String stored = read.get(id).stored();
				String body = stored.substring(stored.indexOf(':', stored.indexOf(':') + 1) + 1);
				this.live.put(id, new Live(id, withError(body, ""), now));
				String group = groupHeader(body);
				if (group != null) {
					this.groups.put(id, group);
					this.backInGroup++;
				}
				this.dead.remove(id);
				Integer priority = this.deadPriorities.remove(id);
				if (priority != null) {
					this.priorities.put(id, priority);
				}
				replayed.add(id);
			}
		}
		return new ReplayReply(replayed, ids.size() - replayed.size());
	}

	// purge_dead.lua: dead -> gone, with the dead letter's priority. Counts the ids found
	// dead before it deletes any.
	long purgeDead(List<String> ids) {
		// An id named twice counts once (seed 2291508825904, step 123 found it counted
		// twice).
		List<String> found = ids.stream().distinct().filter(this.dead::containsKey).toList();
		ids.forEach(this.dead::remove);
		ids.forEach(this.deadPriorities::remove);
		return found.size();
	}

	boolean holdsLease(String id, String token) {
		Live message = this.live.get(id);
		return message != null && message.state == State.IN_FLIGHT && message.token.equals(token);
	}

	/**
	 * @return the scheduled messages in the order of the schedule (due time, then id)
	 */
	List<Live> scheduled() {
		return this.live.values()
			.stream()
			.filter((message) -> message.state == State.SCHEDULED)
			.sorted(Comparator.comparingLong((Live message) -> message.due).thenComparing((message) -> message.id))
			.toList();
	}

	long count(State state) {
		return this.live.values().stream().filter((message) -> message.state == state).count();
	}

	/**
	 * @param paused the groups paused at the reading, whose messages are passed over
	 * @return the due time of the first ready message among the first ids of the ready
	 * lists (one claim would take there: of the list's priority), or -1
	 */
	long oldestReadyDue(Set<String> paused) {
		long oldest = -1;
		boolean readsPriorities = readsPriorities();
		for (int listPriority : prioritiesToRead()) {
			List<String> list = this.readyLists.get(listPriority);
			for (String id : list.subList(0, Math.min(STATS_READY_LOOKUP, list.size()))) {
				Live message = this.live.get(id);
				boolean ownList = !readsPriorities || this.priorities.getOrDefault(id, 0) == listPriority;
				if (message != null && message.state == State.READY && ownList) {
					oldest = (oldest < 0) ? message.due : Math.min(oldest, message.due);
					break;
				}
			}
		}
		// stats.lua: in each group of the rotation (fewer than 100 here), the first
		// member of each rank whose message is ready with the member's due time, among
		// the rank's first 10 (a stale member is passed over).
		Map<String, Integer> lookedByRank = new HashMap<>();
		Set<String> found = new HashSet<>();
		for (String member : this.groupReady) {
			String rank = groupOfMember(member) + "\0" + member.charAt(groupOfMember(member).length() + 1);
			int looked = lookedByRank.merge(rank, 1, Integer::sum);
			if (looked > 10 || found.contains(rank) || paused.contains(groupOfMember(member))) {
				continue;
			}
			Live message = this.live.get(idOfMember(member));
			if (message != null && message.state == State.READY && Math.max(0, message.due) == dueOfMember(member)) {
				found.add(rank);
				long due = dueOfMember(member);
				oldest = (oldest < 0) ? due : Math.min(oldest, due);
			}
		}
		return oldest;
	}

	/**
	 * @return the ready messages by priority that stats.lua reports (the lists' lengths
	 * while it reads them, as claim does)
	 */
	Map<Integer, Long> readyByPriority() {
		List<Long> lengths = new ArrayList<>();
		if (readsPriorities()) {
			this.readyLists.subList(1, this.readyLists.size()).forEach((list) -> lengths.add((long) list.size()));
		}
		return TopicStats.byPriority(count(State.READY), lengths);
	}

	// include/bury.lua: an earlier dead letter of the id moves to
	// "<id>~<time it died>", with more '~' until the name is free, and its priority with
	// it; the new one takes the priority the message had (null for none).
	private void bury(String id, String stored, String error, @Nullable Integer priority) {
		Dead earlier = this.dead.get(id);
		if (earlier != null) {
			String name = id + "~" + Math.max(0, earlier.diedAt());
			while (this.dead.containsKey(name)) {
				name = name + "~";
			}
			this.dead.put(name, earlier);
			Integer earlierPriority = this.deadPriorities.get(id);
			if (earlierPriority != null) {
				this.deadPriorities.put(name, earlierPriority);
			}
		}
		this.dead.put(id, new Dead(stored, error, -1));
		if (this.watchingDeadLetters) {
			this.queuedDeadLetters.add(new Queued(id, stored, error, (priority != null) ? priority : 0));
		}
		if (priority != null) {
			this.deadPriorities.put(id, priority);
		}
		else {
			this.deadPriorities.remove(id);
		}
	}

}
