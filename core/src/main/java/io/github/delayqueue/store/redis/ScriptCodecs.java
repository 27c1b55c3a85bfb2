package io.github.delayqueue.store.redis;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.DeadLetterRetention;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.Script.Key;
import io.github.delayqueue.store.redis.ScriptCodec.Argument;
import io.github.delayqueue.store.redis.ScriptCodec.Signature;
import org.jspecify.annotations.Nullable;

/**
 * The {@link ScriptCodec} of each script, its one declaration: its {@link Script} (file,
 * reply type and keys), its arguments and how its reply reads, in the {@link Signature}
 * its {@code .lua} header must match.
 */
final class ScriptCodecs {

	/** The due kind of a delay in ms from Redis time. */
	private static final String DELAY = "d";

	/** The due kind of an absolute due time (epoch ms). */
	private static final String ABSOLUTE = "a";

	/** Appended to the due kind of a message that replaces a scheduled one. */
	private static final String REPLACE = "r";

	/** Starts the registry's field of a topic that has held a schedule. */
	private static final String TOPIC_FIELD = "~";

	/** Starts the registry's field of the time a name was last claimed. */
	private static final String CLAIMED_FIELD = "~#";

	/** Appended to the due kind of a message sent with a deduplication window. */
	private static final String DEDUPLICATED = "u";

	/** Between a send's due kind and the group of its message. */
	private static final String GROUP_SEPARATOR = "\0";

	private ScriptCodecs() {
	}

	/**
	 * The signature of every script's codec, read from the codecs declared here: a new
	 * script is its {@code .lua} file and one codec.
	 * @return the signatures, one per script
	 */
	static List<Signature<?>> signatures() {
		return Signatures.ALL;
	}

	/** The signatures, read once. */
	private static final class Signatures {

		static final List<Signature<?>> ALL = read();

		private static List<Signature<?>> read() {
			List<Signature<?>> signatures = new ArrayList<>();
			for (Class<?> type : ScriptCodecs.class.getDeclaredClasses()) {
				if (ScriptCodec.class.isAssignableFrom(type)) {
					try {
						Field field = type.getDeclaredField("SIGNATURE");
						field.setAccessible(true);
						signatures.add((Signature<?>) field.get(null));
					}
					catch (ReflectiveOperationException ex) {
						throw new IllegalStateException(type.getSimpleName() + " declares no SIGNATURE", ex);
					}
				}
			}
			signatures.sort(Comparator.comparing((signature) -> signature.script().fileName()));
			return List.copyOf(signatures);
		}

	}

	/**
	 * Stores and schedules messages of one partition.
	 *
	 * @param channel the signal channel
	 * @param partition the partition (for partition 0, the topic)
	 * @param partitions the topic's number of partitions here
	 * @param maxRemembered the most handled ids with a deduplication window the partition
	 * remembers
	 * @param messages the messages, in send order
	 */
	record Send(String channel, String partition, int partitions, int maxRemembered,
			List<NewMessage> messages) implements ScriptCodec<List<Sent>> {

		static final Signature<Send> SIGNATURE = Signature.of(
				Script.of("send", Script.Reply.LIST,
						Script.keys(Script.withGroups(Key.MESSAGES, Key.SCHEDULED, Key.PRIORITIES, Key.PARTITION_COUNT,
								Key.REMEMBERED, Key.DEDUPLICATION), Key.GROUP_WAITS)),
				"two integers per message: outcome", Argument.of("[1] signal channel", Send::channel),
				Argument.of("[2] topic", Send::partition),
				Argument.of("[3] the number of partitions", Send::partitions),
				Argument.of("[4] the most ids to remember", Send::maxRemembered),
				Argument.rest("[5..] four values per message: id, due kind", Send::writeMessages));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		/**
		 * Four values per message: id, due kind (with replace and priority), when, body.
		 */
		private void writeMessages(List<Object> out) {
			for (NewMessage message : this.messages) {
				out.add(message.id());
				String kind = message.relative() ? DELAY : ABSOLUTE;
				kind = message.replaceIfPending() ? kind + REPLACE : kind;
				kind = message.deduplicated() ? kind + DEDUPLICATED : kind;
				kind = (message.priority() > 0) ? kind + message.priority() : kind;
				out.add((message.group() != null) ? kind + GROUP_SEPARATOR + message.group() : kind);
				out.add(message.when());
				out.add(message.body());
			}
		}

		@Override
		public List<Sent> read(Object reply) {
			List<?> values = (List<?>) reply;
			List<Sent> results = new ArrayList<>(this.messages.size());
			for (int i = 0; i < this.messages.size(); i++) {
				long outcome = number(values.get(2 * i));
				results.add(new Sent(this.messages.get(i).id(), number(values.get(2 * i + 1)),
						outcome == 1 || outcome == 3, outcome == 2));
			}
			return results;
		}

	}

	/**
	 * Moves due messages of a partition to its ready lists.
	 *
	 * @param limit the largest number of messages to move
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param lookahead how long before their due time messages may move
	 * @param partitions the topic's number of partitions here
	 */
	record Promote(int limit, String channel, String partition, Duration lookahead,
			int partitions) implements ScriptCodec<PromoteResult> {

		static final Signature<Promote> SIGNATURE = Signature.of(
				Script.of("promote", Script.Reply.LIST,
						Script.withGroups(Script.keys(Script.withPriorities(Key.SCHEDULED, Key.READY, Key.IN_FLIGHT),
								Key.PARTITION_COUNT))),
				"{messages moved, microseconds until",
				Argument.of("[1] largest number of messages to move", Promote::limit),
				Argument.of("[2] signal channel", Promote::channel), Argument.of("[3] topic", Promote::partition),
				Argument.of("[4] lookahead in ms", (promote) -> promote.lookahead().toMillis()),
				Argument.of("[5] the number of partitions", Promote::partitions));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public PromoteResult read(Object reply) {
			List<?> values = (List<?>) reply;
			return new PromoteResult((int) number(values.get(0)), microsOrNone(values.get(1)),
					microsOrNone(values.get(2)), number(values.get(3)) == 1, number(values.get(4)) == 1);
		}

	}

	/**
	 * Leases ready messages of a partition.
	 *
	 * @param limit the largest number of due messages to claim
	 * @param lease how long the lease lasts
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param token the claim's lease token
	 * @param rateLimit the partition's rate limit, or {@code null} for none
	 * @param groupConcurrency most messages of one group in flight, or {@code 0} for no
	 * limit
	 * @param weights the weights of the groups that weigh more than 1
	 * @param groupRateLimit most messages of one group claimed in any window, by every
	 * consumer together, or {@code null} for none
	 */
	record Claim(int limit, Duration lease, int earlyLimit, String token, @Nullable RateLimit rateLimit,
			int groupConcurrency, GroupWeights weights,
			@Nullable RateLimit groupRateLimit) implements ScriptCodec<ClaimResult> {

		static final Signature<Claim> SIGNATURE = Signature.of(
				Script.of("claim", Script.Reply.LIST,
						Script.keys(
								Script.withGroups(Script.withPriorities(Key.READY, Key.IN_FLIGHT, Key.MESSAGES,
										Key.SCHEDULED, Key.LEASES, Key.CLAIM_RECORD, Key.RATE_WINDOW)),
								Key.GROUP_SLOTS, Key.GROUP_PAUSES, Key.GROUP_RATES, Key.GROUP_WAITS)),
				"{lease deadline (epoch ms), claim time",
				Argument.of("[1] largest number of due messages to claim", Claim::limit),
				Argument.of("[2] lease length in ms", (claim) -> claim.lease().toMillis()),
				Argument.of("[3] largest number of messages not yet due to claim",
						(claim) -> Math.max(0, claim.earlyLimit())),
				Argument.of("[4] lease token", Claim::token),
				Argument.optional("[5] rate limit",
						(claim) -> (claim.rateLimit() != null) ? claim.rateLimit().limit() : claim.emptyBeforeLimit()),
				Argument.optional("[6] rate limit period in ms",
						(claim) -> (claim.rateLimit() != null) ? claim.rateLimit().period().toMillis()
								: claim.emptyBeforeLimit()),
				Argument.optional("[7] group concurrency",
						(claim) -> (claim.groupConcurrency() > 0) ? claim.groupConcurrency()
								: Claim.emptyBefore(claim.groupRateLimit() != null || !claim.weights().isEmpty())),
				Argument.optional("[8] per-group rate limit",
						(claim) -> (claim.groupRateLimit() != null) ? claim.groupRateLimit().limit()
								: Claim.emptyBefore(!claim.weights().isEmpty())),
				Argument.optional("[9] per-group rate limit period in ms",
						(claim) -> (claim.groupRateLimit() != null) ? claim.groupRateLimit().period().toMillis()
								: Claim.emptyBefore(!claim.weights().isEmpty())),
				Argument.rest("[10..] weights of groups",
						(claim, out) -> claim.weights().asMap().forEach((group, weight) -> {
							out.add(group);
							out.add(weight);
						})));

		/**
		 * A claim whose groups all weigh 1.
		 * @param limit the largest number of due messages to claim
		 * @param lease the lease length
		 * @param earlyLimit the largest number of messages not yet due to claim
		 * @param token the lease token
		 * @param rateLimit the rate limit, or {@code null}
		 * @param groupConcurrency most messages of one group in flight, or {@code 0}
		 */
		Claim(int limit, Duration lease, int earlyLimit, String token, @Nullable RateLimit rateLimit,
				int groupConcurrency) {
			this(limit, lease, earlyLimit, token, rateLimit, groupConcurrency, GroupWeights.NONE, null);
		}

		/**
		 * @return {@code ""} for an absent rate limit's arguments when the group
		 * concurrency, the per-group rate limit or weights follow them, else {@code null}
		 * (nothing written)
		 */
		private @Nullable String emptyBeforeLimit() {
			return emptyBefore(this.groupConcurrency > 0 || this.groupRateLimit != null || !this.weights.isEmpty());
		}

		/**
		 * @return {@code ""} for an absent argument that others follow, else {@code null}
		 */
		private static @Nullable String emptyBefore(boolean followed) {
			return followed ? "" : null;
		}

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public ClaimResult read(Object reply) {
			List<?> values = (List<?>) reply;
			long deadline = number(values.get(0));
			long claimedAtMicros = number(values.get(1));
			Instant claimedAt = Instant.ofEpochSecond(claimedAtMicros / 1_000_000,
					(claimedAtMicros % 1_000_000) * 1000);
			List<ClaimedMessage> claimed = new ArrayList<>((values.size() - 3) / 2);
			for (int i = 3; i + 1 < values.size(); i += 2) {
				claimed.add(new ClaimedMessage(text(values.get(i)), this.token, deadline, claimedAt,
						(byte[]) values.get(i + 1)));
			}
			// An odd element after the messages: how long the rate limit holds the rest
			// back.
			Duration rateLimitedFor = ((values.size() - 3) % 2 == 1)
					? Duration.of(number(values.get(values.size() - 1)), ChronoUnit.MICROS) : Duration.ZERO;
			// A negative third element: nothing more now, but a group's pause ends in
			// that many ms.
			long more = number(values.get(2));
			return new ClaimResult(claimed, more == 1, rateLimitedFor,
					(more < 0) ? Duration.ofMillis(-more) : Duration.ZERO);
		}

	}

	/**
	 * Acknowledges messages.
	 *
	 * @param channel the signal channel, told when a group gets a free slot
	 * @param partition the partition
	 * @param ids the message ids
	 * @param leaseTokens the lease token held for each id
	 */
	record Ack(String channel, String partition, List<String> ids,
			List<String> leaseTokens) implements ScriptCodec<List<Boolean>> {

		static final Signature<Ack> SIGNATURE = Signature.of(
				Script.of("ack", Script.Reply.LIST, Key.IN_FLIGHT, Key.MESSAGES, Key.LEASES, Key.PRIORITIES,
						Key.REMEMBERED, Key.DEDUPLICATION, Key.GROUPS, Key.GROUP_SLOTS, Key.GROUP_TAGS,
						Key.GROUP_ROTATION),
				"one integer per message: 1 if acknowledged", Argument.of("[1] signal channel", Ack::channel),
				Argument.of("[2] topic", Ack::partition), Argument.rest("[3..] two values per message: id, lease token",
						(ack, out) -> leases(out, ack.ids(), ack.leaseTokens())));

		Ack {
			requireLeases(ids, leaseTokens);
		}

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public List<Boolean> read(Object reply) {
			return flags(reply);
		}

	}

	/**
	 * Schedules a leased message again: its next attempt, or a slow-down.
	 *
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param delay how long to wait from now
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param countsAttempt whether the delivery counts as an attempt (a failure) or not
	 * (a slow-down)
	 * @param error the error of the failed attempt, {@code ""} for none
	 * @param groupWait what a message of a group does to its group until its next attempt
	 */
	record Retry(String id, String leaseToken, Duration delay, String channel, String partition, boolean countsAttempt,
			String error, GroupWait groupWait) implements ScriptCodec<Long> {

		static final Signature<Retry> SIGNATURE = Signature.of(
				Script.of("retry", Script.Reply.INTEGER,
						Script.keys(Script.withGroups(Key.IN_FLIGHT, Key.MESSAGES, Key.SCHEDULED, Key.LEASES),
								Key.GROUP_SLOTS, Key.GROUP_PAUSES, Key.PRIORITIES, Key.GROUP_WAITS)),
				"the due time of the next attempt", Argument.of("[1] id", Retry::id),
				Argument.of("[2] lease token", Retry::leaseToken),
				Argument.of("[3] backoff in ms", (retry) -> retry.delay().toMillis()),
				Argument.of("[4] signal channel", Retry::channel), Argument.of("[5] topic", Retry::partition),
				Argument.of("[6] attempts to count", (retry) -> retry.countsAttempt() ? 1 : 0),
				Argument.of("[7] error of the failed attempt", Retry::error), Argument
					.optional("[8] what a message of a group does to its group", (retry) -> switch (retry.groupWait()) {
						case NONE -> null;
						case GROUP -> 1;
						case IN_GROUP -> 2;
					}));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Long read(Object reply) {
			return number(reply);

		}

	}

	/**
	 * Moves a leased message to the dead letters.
	 *
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param error the last error
	 * @param queueChannel the signal channel of the partition's dead-letter queue
	 * @param queue the name of the partition's dead-letter queue
	 * @param retention the topic's dead-letter retention
	 * @param listened whether this application listens to the topic's dead letters
	 * @param channel the signal channel, told when a group gets a free slot
	 * @param partition the partition
	 */
	record DeadLetter(String id, String leaseToken, String error, String queueChannel, String queue,
			DeadLetterRetention retention, boolean listened, String channel,
			String partition) implements ScriptCodec<Boolean> {

		static final Signature<DeadLetter> SIGNATURE = Signature.of(
				Script.of("dead_letter", Script.Reply.INTEGER,
						Script.keys(Script.withDeadLetterPriorities(Key.IN_FLIGHT, Key.MESSAGES, Key.DEAD,
								Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.LEASES, Key.PRIORITIES, Key.DEAD_PRIORITIES,
								Key.DEAD_LETTERS_WATCH, Key.DEAD_LETTERS_MESSAGES, Key.DEAD_LETTERS_READY), Key.GROUPS,
								Key.GROUP_SLOTS, Key.GROUP_TAGS, Key.GROUP_ROTATION)),
				"1 if dead-lettered", Argument.of("[1] id", DeadLetter::id),
				Argument.of("[2] lease token", DeadLetter::leaseToken),
				Argument.of("[3] last error", DeadLetter::error),
				Argument.of("[4] signal channel of the dead-letter queue", DeadLetter::queueChannel),
				Argument.of("[5] the dead-letter queue's name", DeadLetter::queue),
				Argument.of("[6] the most dead letters the dead set keeps", (call) -> call.retention().maxCount()),
				Argument.of("[7] ms a dead letter is kept", (call) -> call.retention().maxAge().toMillis()),
				Argument.of("[8] 1 if the caller listens to the topic's dead letters",
						(call) -> call.listened() ? 1 : 0),
				Argument.of("[9] signal channel", DeadLetter::channel),
				Argument.of("[10] topic", DeadLetter::partition));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Boolean read(Object reply) {
			return number(reply) == 1;
		}

	}

	/**
	 * Takes back messages whose lease has expired.
	 *
	 * @param limit the largest number of messages to take back
	 * @param maxAttempts the topic's maximum attempts
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param queueChannel the signal channel of the partition's dead-letter queue
	 * @param queue the name of the partition's dead-letter queue
	 * @param retention the topic's dead-letter retention
	 * @param listened whether this application listens to the topic's dead letters
	 */
	record ExpireLeases(int limit, int maxAttempts, String channel, String partition, String queueChannel, String queue,
			DeadLetterRetention retention, boolean listened) implements ScriptCodec<LeaseExpiryResult> {

		static final Signature<ExpireLeases> SIGNATURE = Signature.of(
				Script.of("expire_leases", Script.Reply.LIST,
						Script.keys(Script.withGroups(Script.keys(
								Script.withPriorities(Key.IN_FLIGHT, Key.MESSAGES, Key.READY, Key.DEAD,
										Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.LEASES),
								Script.withDeadLetterPriorities(Key.DEAD_PRIORITIES, Key.DEAD_LETTERS_WATCH,
										Key.DEAD_LETTERS_MESSAGES, Key.DEAD_LETTERS_READY))),
								Key.GROUP_SLOTS)),
				"{messages made ready again, messages dead-lettered",
				Argument.of("[1] largest number of messages to take back", ExpireLeases::limit),
				Argument.of("[2] maximum attempts", ExpireLeases::maxAttempts),
				Argument.of("[3] signal channel", ExpireLeases::channel),
				Argument.of("[4] topic", ExpireLeases::partition),
				Argument.of("[5] signal channel of the dead-letter queue", ExpireLeases::queueChannel),
				Argument.of("[6] the dead-letter queue's name", ExpireLeases::queue),
				Argument.of("[7] the most dead letters the dead set keeps", (call) -> call.retention().maxCount()),
				Argument.of("[8] ms a dead letter is kept", (call) -> call.retention().maxAge().toMillis()), Argument
					.of("[9] 1 if the caller listens to the topic's dead letters", (call) -> call.listened() ? 1 : 0));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public LeaseExpiryResult read(Object reply) {
			List<?> values = (List<?>) reply;
			int requeued = (int) number(values.get(0));
			List<String> ids = texts(values.subList(3, values.size()));
			long nextExpiryMillis = number(values.get(2));
			return new LeaseExpiryResult(ids.subList(0, requeued), ids.subList(requeued, ids.size()),
					(nextExpiryMillis >= 0) ? Duration.ofMillis(nextExpiryMillis) : null);
		}

	}

	/**
	 * Hands leased messages back, ready again at once.
	 *
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param ids the message ids
	 * @param leaseTokens the lease token held for each id
	 */
	record Release(String channel, String partition, List<String> ids,
			List<String> leaseTokens) implements ScriptCodec<List<Boolean>> {

		static final Signature<Release> SIGNATURE = Signature.of(
				Script.of("release", Script.Reply.LIST,
						Script.keys(Script.withGroups(Script.withPriorities(Key.IN_FLIGHT, Key.READY, Key.LEASES)),
								Key.MESSAGES, Key.GROUP_SLOTS)),
				"one integer per message: 1 if it is ready", Argument.of("[1] signal channel", Release::channel),
				Argument.of("[2] topic", Release::partition),
				Argument.rest("[3..] two values per message: id, lease token",
						(release, out) -> leases(out, release.ids(), release.leaseTokens())));

		Release {
			requireLeases(ids, leaseTokens);
		}

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public List<Boolean> read(Object reply) {
			return flags(reply);
		}

	}

	/**
	 * Hands back what a consumer's claim leased.
	 *
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param token the claim's lease token
	 * @param lease the claim's lease length
	 */
	record ReleaseClaim(String channel, String partition, String token,
			Duration lease) implements ScriptCodec<List<String>> {

		static final Signature<ReleaseClaim> SIGNATURE = Signature.of(
				Script.of("release_claim", Script.Reply.LIST,
						Script.keys(
								Script.withGroups(
										Script.withPriorities(Key.IN_FLIGHT, Key.READY, Key.LEASES, Key.CLAIM_RECORD)),
								Key.MESSAGES, Key.GROUP_SLOTS)),
				"the ids handed back", Argument.of("[1] signal channel", ReleaseClaim::channel),
				Argument.of("[2] topic", ReleaseClaim::partition),
				Argument.of("[3] the claim's lease token", ReleaseClaim::token),
				Argument.of("[4] the lease length in ms", (release) -> release.lease().toMillis()));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public List<String> read(Object reply) {
			return texts((List<?>) reply);
		}

	}

	/**
	 * Extends leases.
	 *
	 * @param length the new lease length
	 * @param ids the message ids
	 * @param leaseTokens the lease token held for each id
	 */
	record ExtendLeases(Duration length, List<String> ids,
			List<String> leaseTokens) implements ScriptCodec<List<Long>> {

		static final Signature<ExtendLeases> SIGNATURE = Signature.of(
				Script.of("extend_leases", Script.Reply.LIST, Key.IN_FLIGHT, Key.LEASES),
				"one integer per message: its new lease deadline",
				Argument.of("[1] lease length in ms", (extend) -> extend.length().toMillis()),
				Argument.rest("[2..] two values per message: id, lease token",
						(extend, out) -> leases(out, extend.ids(), extend.leaseTokens())));

		ExtendLeases {
			requireLeases(ids, leaseTokens);
		}

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public List<Long> read(Object reply) {
			return ((List<?>) reply).stream().map(ScriptCodecs::number).toList();
		}

	}

	/**
	 * Makes the stored messages of groups that are neither scheduled nor in flight ready
	 * again in their groups, a chunk of the groups hash a call, after the group ready set
	 * was lost.
	 *
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param cursor where the walk of the groups hash goes on from, {@code "0"} to start
	 * @param count about how many entries to look at
	 */
	record Regroup(String channel, String partition, String cursor, int count) implements ScriptCodec<Regrouped> {

		static final Signature<Regroup> SIGNATURE = Signature.of(
				Script.of("regroup", Script.Reply.LIST,
						Script.withGroups(Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT, Key.PRIORITIES)),
				"{the cursor to go on from", Argument.of("[1] signal channel", Regroup::channel),
				Argument.of("[2] topic", Regroup::partition),
				Argument.of("[3] the cursor of the groups hash", Regroup::cursor),
				Argument.of("[4] about how many entries to look at", Regroup::count));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Regrouped read(Object reply) {
			List<?> values = (List<?>) reply;
			return new Regrouped(text(values.get(0)), number(values.get(1)));
		}

	}

	/**
	 * Sets each group's slots taken from the messages in flight.
	 *
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param limit the most messages in flight to count
	 */
	record RecountSlots(String channel, String partition, int limit) implements ScriptCodec<SlotRecount> {

		static final Signature<RecountSlots> SIGNATURE = Signature.of(
				Script.of("recount_slots", Script.Reply.LIST, Key.IN_FLIGHT, Key.GROUPS, Key.GROUP_SLOTS,
						Key.GROUP_TAGS, Key.GROUP_ROTATION, Key.GROUP_PAUSES, Key.GROUP_WAITS),
				"{-1} when skipped", Argument.of("[1] signal channel", RecountSlots::channel),
				Argument.of("[2] topic", RecountSlots::partition),
				Argument.of("[3] the most messages in flight to count", RecountSlots::limit));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public SlotRecount read(Object reply) {
			List<?> values = (List<?>) reply;
			if (values.size() == 1) {
				return new SlotRecount(true, List.of());
			}
			List<String> corrected = new ArrayList<>(values.size() / 3);
			for (int i = 0; i + 2 < values.size(); i += 3) {
				long before = number(values.get(i + 1));
				long after = number(values.get(i + 2));
				corrected.add(text(values.get(i)) + ((before == after) ? ": parked with nothing in flight, let back"
						: ": " + before + " -> " + after));
			}
			return new SlotRecount(false, corrected);
		}

	}

	/**
	 * What a call of {@code recount_slots.lua} did.
	 *
	 * @param skipped whether too many messages were in flight to count them
	 * @param corrected each group whose count it corrected, as
	 * {@code "<group>: <before> -> <after>"}
	 */
	record SlotRecount(boolean skipped, List<String> corrected) {

	}

	/**
	 * What a call of {@code regroup.lua} did.
	 *
	 * @param cursor where the walk goes on from, {@code "0"} once it is done
	 * @param madeReady the messages it made ready again
	 */
	record Regrouped(String cursor, long madeReady) {

	}

	/**
	 * Deletes a pending message.
	 *
	 * @param id the message id
	 * @param partitions the topic's number of partitions here
	 * @param token new for each cancel request, the same when the request is sent again
	 */
	record Cancel(String id, int partitions, String token) implements ScriptCodec<Boolean> {

		static final Signature<Cancel> SIGNATURE = Signature.of(
				Script.of("cancel", Script.Reply.INTEGER, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT, Key.PRIORITIES,
						Key.PARTITION_COUNT, Key.CANCELS, Key.GROUPS, Key.GROUP_WAITS),
				"1 if the message was pending", Argument.of("[1] id", Cancel::id),
				Argument.of("[2] the number of partitions", Cancel::partitions),
				Argument.of("[3] request token", Cancel::token));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Boolean read(Object reply) {
			return number(reply) == 1;
		}

	}

	/**
	 * Gives a pending message a new due time, a delay from now.
	 *
	 * @param id the message id
	 * @param delay the delay
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param partitions the topic's number of partitions here
	 */
	record Reschedule(String id, Duration delay, String channel, String partition,
			int partitions) implements ScriptCodec<Long> {

		static final Signature<Reschedule> SIGNATURE = Signature.of(
				Script.of("reschedule", Script.Reply.INTEGER, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT,
						Key.PARTITION_COUNT, Key.GROUPS, Key.GROUP_WAITS),
				"the new due time", Argument.of("[1] id", Reschedule::id),
				Argument.of("[2] due kind", (reschedule) -> DELAY),
				Argument.of("[3] the delay or due time", (reschedule) -> NewMessage.ceilMillis(reschedule.delay())),
				Argument.of("[4] signal channel", Reschedule::channel), Argument.of("[5] topic", Reschedule::partition),
				Argument.of("[6] the number of partitions", Reschedule::partitions));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Long read(Object reply) {
			return number(reply);
		}

	}

	/**
	 * Moves dead letters back to the schedule.
	 *
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param partitions the topic's number of partitions here
	 * @param ids the ids
	 */
	record Replay(String channel, String partition, int partitions,
			List<String> ids) implements ScriptCodec<ReplayResult> {

		static final Signature<Replay> SIGNATURE = Signature.of(
				Script.of("replay", Script.Reply.LIST, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.MESSAGES,
						Key.SCHEDULED, Key.PRIORITIES, Key.DEAD_PRIORITIES, Key.PARTITION_COUNT, Key.REMEMBERED,
						Key.GROUPS),
				"{messages replayed, ids left dead", Argument.of("[1] signal channel", Replay::channel),
				Argument.of("[2] topic", Replay::partition),
				Argument.of("[3] the number of partitions", Replay::partitions),
				Argument.rest("[4..] ids to replay", (replay, out) -> out.addAll(replay.ids())));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public ReplayResult read(Object reply) {
			List<?> values = (List<?>) reply;
			return new ReplayResult(texts(values.subList(2, values.size())), (int) number(values.get(1)));
		}

	}

	/**
	 * Deletes dead letters for good.
	 *
	 * @param partitions the topic's number of partitions here
	 * @param ids the ids
	 */
	record PurgeDead(int partitions, List<String> ids) implements ScriptCodec<Long> {

		static final Signature<PurgeDead> SIGNATURE = Signature.of(
				Script.of("purge_dead", Script.Reply.INTEGER, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS,
						Key.DEAD_PRIORITIES, Key.PARTITION_COUNT),
				"the number of messages deleted", Argument.of("[1] the number of partitions", PurgeDead::partitions),
				Argument.rest("[2..] ids to delete", (purge, out) -> out.addAll(purge.ids())));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Long read(Object reply) {
			return number(reply);
		}

	}

	/**
	 * Counts a partition's messages in each state.
	 *
	 * @param readyHeadLookup the most ids at the head of each ready list to look at
	 */
	record Stats(int readyHeadLookup) implements ScriptCodec<TopicStats> {

		static final Signature<Stats> SIGNATURE = Signature.of(
				Script.of("stats", Script.Reply.LIST,
						Script.keys(
								Script.withGroups(Script.keys(Script.withPriorities(Key.MESSAGES, Key.SCHEDULED,
										Key.READY, Key.IN_FLIGHT, Key.DEAD), Key.REMEMBERED)),
								Key.GROUP_SLOTS, Key.GROUP_PAUSES)),
				"{Redis time (epoch ms), stored messages",
				Argument.of("[1] most ids at the head of each ready list", Stats::readyHeadLookup));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public TopicStats read(Object reply) {
			List<?> values = (List<?>) reply;
			long stored = number(values.get(1));
			long scheduled = number(values.get(2));
			long inFlight = number(values.get(3));
			long ready = Math.max(0, stored - scheduled - inFlight);
			Map<String, Long> busiestGroups = new LinkedHashMap<>();
			int next = readCounts(values, 9, busiestGroups);
			Map<String, Long> busiestInFlight = new LinkedHashMap<>();
			next = readCounts(values, next, busiestInFlight);
			long pausedGroups = number(values.get(next));
			Map<String, Long> firstPausesToEnd = new LinkedHashMap<>();
			next = readCounts(values, next + 1, firstPausesToEnd);
			List<Long> listLengths = values.subList(next, values.size()).stream().map(ScriptCodecs::number).toList();
			return new TopicStats(number(values.get(0)), scheduled, ready, inFlight, number(values.get(4)),
					number(values.get(5)), number(values.get(6)), TopicStats.byPriority(ready, listLengths),
					number(values.get(7)), number(values.get(8)), busiestGroups, busiestInFlight, pausedGroups,
					firstPausesToEnd);
		}

		/**
		 * Reads a number k of groups at {@code at}, then k pairs group, count.
		 * @return the index after them
		 */
		private static int readCounts(List<?> values, int at, Map<String, Long> counts) {
			int size = (int) number(values.get(at));
			for (int i = at + 1; i < at + 1 + 2 * size; i += 2) {
				counts.put(text(values.get(i)), number(values.get(i + 1)));
			}
			return at + 1 + 2 * size;
		}

	}

	/**
	 * Reads one group of a partition by name.
	 *
	 * @param group the group
	 * @param most the most ready ids to read
	 * @param partitions the topic's number of partitions here
	 */
	record Group(String group, int most, int partitions) implements ScriptCodec<GroupView> {

		static final Signature<Group> SIGNATURE = Signature.of(
				Script.of("group", Script.Reply.LIST, Key.SCHEDULED, Key.IN_FLIGHT, Key.GROUPS, Key.GROUP_READY,
						Key.GROUP_COUNTS, Key.GROUP_ROTATION, Key.GROUP_SLOTS, Key.GROUP_PAUSES, Key.MESSAGES,
						Key.PRIORITIES, Key.PARTITION_COUNT),
				"{ready messages of the group", Argument.of("[1] group", Group::group),
				Argument.of("[2] most ready ids to return", Group::most),
				Argument.of("[3] the number of partitions", Group::partitions));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public GroupView read(Object reply) {
			List<?> values = (List<?>) reply;
			List<String> ids = values.subList(4, values.size()).stream().map(ScriptCodecs::text).toList();
			long pausedUntil = number(values.get(3));
			return new GroupView(this.group, Math.max(0, number(values.get(0))), Math.max(0, number(values.get(1))),
					number(values.get(2)) == 1, pausedUntil >= 0,
					(pausedUntil > 0) ? Instant.ofEpochMilli(pausedUntil) : null, ids);
		}

	}

	/**
	 * Pauses one group of a partition.
	 *
	 * @param group the group
	 * @param partitions the topic's number of partitions here
	 * @param channel the signal channel, told when the pause ends sooner than before
	 * @param partition the partition
	 * @param length how long the pause lasts, or {@code null} until it is resumed
	 */
	record PauseGroup(String group, int partitions, String channel, String partition,
			@Nullable Duration length) implements ScriptCodec<GroupPause> {

		static final Signature<PauseGroup> SIGNATURE = Signature.of(
				Script.of("pause_group", Script.Reply.LIST, Key.GROUP_PAUSES, Key.GROUP_ROTATION, Key.PARTITION_COUNT,
						Key.GROUP_WAITS),
				"{when the pause ends", Argument.of("[1] group", PauseGroup::group),
				Argument.of("[2] the number of partitions", PauseGroup::partitions),
				Argument.of("[3] signal channel", PauseGroup::channel), Argument.of("[4] topic", PauseGroup::partition),
				Argument.optional("[5] pause length in ms",
						(pause) -> (pause.length() != null) ? Math.max(1, pause.length().toMillis()) : null));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public GroupPause read(Object reply) {
			List<?> values = (List<?>) reply;
			long until = number(values.get(0));
			return new GroupPause((until >= 0) ? Instant.ofEpochMilli(until) : null, number(values.get(1)) == 1);
		}

	}

	/**
	 * What a call of {@code pause_group.lua} did.
	 *
	 * @param until when the pause ends, {@code null} when it lasts until resumed
	 * @param pausedAlready whether the group was paused already
	 */
	record GroupPause(@Nullable Instant until, boolean pausedAlready) {

	}

	/**
	 * Resumes one paused group of a partition.
	 *
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param group the group
	 * @param partitions the topic's number of partitions here
	 * @param token the request's token: a run of the same request after one that resumed
	 * the group (its reply lost) answers {@code true}
	 */
	record ResumeGroup(String channel, String partition, String group, int partitions,
			String token) implements ScriptCodec<Boolean> {

		static final Signature<ResumeGroup> SIGNATURE = Signature.of(
				Script.of("resume_group", Script.Reply.INTEGER, Key.GROUP_PAUSES, Key.GROUP_COUNTS, Key.GROUP_TAGS,
						Key.GROUP_ROTATION, Key.PARTITION_COUNT, Key.CANCELS, Key.GROUP_WAITS),
				"1 if the group was paused", Argument.of("[1] signal channel", ResumeGroup::channel),
				Argument.of("[2] topic", ResumeGroup::partition), Argument.of("[3] group", ResumeGroup::group),
				Argument.of("[4] the number of partitions", ResumeGroup::partitions),
				Argument.of("[5] request token", ResumeGroup::token));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Boolean read(Object reply) {
			return number(reply) == 1;
		}

	}

	/**
	 * Reads a page of a partition's messages in one state.
	 *
	 * @param state the state
	 * @param offset the rank of the first message
	 * @param limit the largest number of messages
	 */
	record Page(MessageState state, long offset, int limit) implements ScriptCodec<MessagePage> {

		static final Signature<Page> SIGNATURE = Signature.of(
				Script.of("page", Script.Reply.LIST,
						Script.withGroups(Script.keys(Script.withPriorities(Key.STATE_INDEX, Key.STATE_MESSAGES,
								Key.DEAD_ERRORS, Key.SCHEDULED, Key.IN_FLIGHT), Key.DEAD_PRIORITIES))),
				"{entries in the index", Argument.of("[1] state", (page) -> page.state().code()),
				Argument.of("[2] offset", Page::offset), Argument.of("[3] largest number of messages", Page::limit),
				Argument.of("[4] most bytes of a stored message to load", (page) -> MessageSnapshot.MAX_READ_BYTES));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public MessagePage read(Object reply) {
			List<?> values = (List<?>) reply;
			List<MessageSummary> summaries = new ArrayList<>((values.size() - 1) / 6);
			for (int i = 1; i + 5 < values.size(); i += 6) {
				String error = text(values.get(i + 4));
				summaries.add(new MessageSummary(text(values.get(i)), this.state, number(values.get(i + 1)),
						(int) Math.min(Integer.MAX_VALUE, number(values.get(i + 2))), number(values.get(i + 3)),
						(this.state == MessageState.DEAD) ? error : null,
						(int) Math.max(0, Math.min(9, number(values.get(i + 5))))));
			}
			return new MessagePage(number(values.get(0)), summaries);
		}

	}

	/**
	 * Finds one message in whatever state it is.
	 *
	 * @param id the message id
	 * @param maxBytes the most bytes of the stored message to read
	 * @param partitions the topic's number of partitions here
	 */
	record Inspect(String id, int maxBytes, int partitions) implements ScriptCodec<@Nullable MessageSnapshot> {

		static final Signature<Inspect> SIGNATURE = Signature.of(
				Script.of("inspect", Script.Reply.LIST, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT, Key.DEAD,
						Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.PRIORITIES, Key.DEAD_PRIORITIES, Key.PARTITION_COUNT),
				"{} if the id is unknown", Argument.of("[1] id", Inspect::id),
				Argument.of("[2] most bytes of the stored message", Inspect::maxBytes),
				Argument.of("[3] the number of partitions", Inspect::partitions), Argument
					.of("[4] most bytes of the stored message to load", (inspect) -> MessageSnapshot.MAX_READ_BYTES));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public @Nullable MessageSnapshot read(Object reply) {
			List<?> values = (List<?>) reply;
			if (values.isEmpty()) {
				return null;
			}
			MessageState state = MessageState.ofCode(text(values.get(0)));
			String error = text(values.get(4));
			return new MessageSnapshot(this.id, state, number(values.get(1)), number(values.get(2)),
					(byte[]) values.get(3), (state == MessageState.DEAD) ? error : null, (int) number(values.get(5)));
		}

	}

	/**
	 * Reads a topic's number of partitions as Redis keeps it.
	 */
	record PartitionCount() implements ScriptCodec<PartitionCount.Reply> {

		static final Signature<PartitionCount> SIGNATURE = Signature.of(
				Script.of("partition_count", Script.Reply.LIST, Key.PARTITION_COUNT, Key.PARTITION_CHANGE),
				"{the count, the change");

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Reply read(Object reply) {
			List<?> values = (List<?>) reply;
			String stored = text(values.get(0));
			return new Reply(countOf(stored), text(values.get(1)), stored);
		}

		/**
		 * The count, and the change on its way.
		 *
		 * @param count the topic's number of partitions, 0 if what Redis holds is not a
		 * count (written by something else)
		 * @param change the change on its way, or {@code ""}
		 * @param stored what Redis holds ({@code "1"} when absent)
		 */
		record Reply(int count, String change, String stored) {
		}

	}

	/**
	 * The count a partition count or count marker names, as the scripts read it (see
	 * {@code partition_refusal}): its leading digits.
	 * @param marker the marker, not empty
	 * @return the count, or 0 if the marker starts with no digit or with more than nine
	 * (it is no count: something else wrote it)
	 */
	static int countOf(String marker) {
		int digits = 0;
		while (digits < marker.length() && marker.charAt(digits) >= '0' && marker.charAt(digits) <= '9') {
			digits++;
		}
		return (digits == 0 || digits > 9) ? 0 : Integer.parseInt(marker.substring(0, digits));

	}

	/**
	 * Records a change of a topic's number of partitions, if the count is still the one
	 * read and no other change is on its way.
	 *
	 * @param from the count read
	 * @param to the new count
	 * @param token the change's token
	 * @param expiry how long the record lasts unless the change ends
	 */
	record BeginPartitionChange(int from, int to, String token,
			Duration expiry) implements ScriptCodec<BeginPartitionChange.Reply> {

		static final Signature<BeginPartitionChange> SIGNATURE = Signature.of(
				Script.of("begin_partition_change", Script.Reply.LIST, Key.PARTITION_COUNT, Key.PARTITION_CHANGE,
						Key.DEAD_LETTERS_WATCH),
				"{1 if begun else 0", Argument.of("[1] the count the caller read", BeginPartitionChange::from),
				Argument.of("[2] the new count", BeginPartitionChange::to),
				Argument.of("[3] the change's token", BeginPartitionChange::token),
				Argument.of("[4] ms until the record expires", (begin) -> begin.expiry().toMillis()));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Reply read(Object reply) {
			List<?> values = (List<?>) reply;
			return new Reply(number(values.get(0)) == 1, number(values.get(3)) == 1);
		}

		/**
		 * Whether the change began.
		 *
		 * @param begun whether it did
		 * @param watched whether the topic's dead letters are listened to (partition 0
		 * copies them)
		 */
		record Reply(boolean begun, boolean watched) {
		}

	}

	/**
	 * Sets a partition's count marker if it still holds what was read.
	 *
	 * @param expected the marker read ({@code ""} for none), or {@code "?"} to read only
	 * @param marker the new marker ({@code ""} to delete it)
	 * @param onlyIfEmpty whether to set it only while the partition holds no message
	 * @param watch whether the partition copies dead letters too once the marker is set
	 */
	record MarkPartition(String expected, String marker, boolean onlyIfEmpty,
			boolean watch) implements ScriptCodec<MarkPartition.Reply> {

		static final Signature<MarkPartition> SIGNATURE = Signature.of(
				Script.of("mark_partition", Script.Reply.LIST, Key.PARTITION_COUNT, Key.MESSAGES, Key.DEAD,
						Key.DEAD_LETTERS_MESSAGES, Key.DEAD_LETTERS_DEAD, Key.SCHEDULES, Key.DEAD_LETTERS_WATCH,
						Key.REMEMBERED, Key.GROUP_PAUSES),
				"{1 if set else 0", Argument.of("[1] the marker the caller read", MarkPartition::expected),
				Argument.of("[2] the new marker", MarkPartition::marker),
				Argument.of("[3] 1 to set it only while", (mark) -> mark.onlyIfEmpty() ? 1 : 0),
				Argument.of("[4] 1 to have the partition copy dead letters", (mark) -> mark.watch() ? 1 : 0));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Reply read(Object reply) {
			List<?> values = (List<?>) reply;
			return new Reply(number(values.get(0)) == 1, text(values.get(1)), number(values.get(2)),
					number(values.get(3)) == 1, RememberedIds.read(values, 4));
		}

		/**
		 * What a mark found.
		 *
		 * @param set whether the marker was set
		 * @param found the marker found ({@code ""} for none)
		 * @param held the messages the partition holds, stored and dead
		 * @param watched whether the partition copied dead letters before
		 * @param remembered the ids it remembers whose window has not ended
		 */
		record Reply(boolean set, String found, long held, boolean watched, RememberedIds remembered) {
		}

	}

	/**
	 * The ids a partition remembers for deduplication whose window has not ended, as
	 * {@code remembered_ids.lua} reads them, three values of a reply.
	 *
	 * @param count how many
	 * @param lastWindowEndMs when the last of their windows ends (epoch ms), 0 for none
	 * @param some the first few of them
	 */
	record RememberedIds(long count, long lastWindowEndMs, List<String> some) {

		static final RememberedIds NONE = new RememberedIds(0, 0, List.of());

		static RememberedIds read(List<?> values, int from) {
			return new RememberedIds(number(values.get(from)), number(values.get(from + 1)),
					texts((List<?>) values.get(from + 2)));
		}

		/**
		 * @return the ids of both, and the later end of their windows
		 */
		RememberedIds and(RememberedIds other) {
			List<String> ids = new ArrayList<>(this.some);
			ids.addAll(other.some);
			return new RememberedIds(this.count + other.count, Math.max(this.lastWindowEndMs, other.lastWindowEndMs),
					List.copyOf(ids));
		}

	}

	/**
	 * Makes a recorded change of a topic's number of partitions take effect, if partition
	 * 0 holds no message.
	 *
	 * @param from the count the change began from
	 * @param to the new count
	 * @param token the change's token
	 */
	record CommitPartitionChange(int from, int to, String token) implements ScriptCodec<CommitPartitionChange.Reply> {

		static final Signature<CommitPartitionChange> SIGNATURE = Signature.of(
				Script.of("commit_partition_change", Script.Reply.LIST, Key.PARTITION_COUNT, Key.PARTITION_CHANGE,
						Key.MESSAGES, Key.DEAD, Key.DEAD_LETTERS_MESSAGES, Key.DEAD_LETTERS_DEAD, Key.SCHEDULES,
						Key.REMEMBERED, Key.GROUP_PAUSES),
				"{1, 0} when committed; {0, 0} when the change is no longer recorded",
				Argument.of("[1] the count the change", CommitPartitionChange::from),
				Argument.of("[2] the new count", CommitPartitionChange::to),
				Argument.of("[3] the change's token", CommitPartitionChange::token));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Reply read(Object reply) {
			List<?> values = (List<?>) reply;
			return new Reply(number(values.get(0)) == 1, number(values.get(1)),
					(values.size() > 2) ? RememberedIds.read(values, 2) : RememberedIds.NONE);
		}

		/**
		 * Whether the change took effect.
		 *
		 * @param committed whether it did
		 * @param held the messages partition 0 holds, which kept it from taking effect
		 * @param remembered the ids partition 0 remembers whose window has not ended,
		 * which kept it from taking effect too
		 */
		record Reply(boolean committed, long held, RememberedIds remembered) {
		}

	}

	/**
	 * Forgets a change of a topic's number of partitions that did not take effect.
	 *
	 * @param record the change record, {@code <token>:<new count>}
	 */
	record AbortPartitionChange(String record) implements ScriptCodec<Boolean> {

		static final Signature<AbortPartitionChange> SIGNATURE = Signature.of(
				Script.of("abort_partition_change", Script.Reply.INTEGER, Key.PARTITION_CHANGE), "1 if it was recorded",
				Argument.of("[1] the change record", AbortPartitionChange::record));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Boolean read(Object reply) {
			return number(reply) == 1;
		}

	}

	private static void requireLeases(List<String> ids, List<String> leaseTokens) {
		requireIds(ids);
		if (leaseTokens.size() != ids.size()) {
			throw new IllegalArgumentException("A call takes one lease token per message id, but was given "
					+ ids.size() + " ids and " + leaseTokens.size() + " lease tokens");
		}
	}

	/**
	 * Checks the number of ids of one call.
	 * @param ids the ids
	 * @throws IllegalArgumentException unless there are 1 to
	 * {@value io.github.delayqueue.store.MessageStore#MAX_IDS_PER_CALL}
	 */
	static void requireIds(List<String> ids) {
		if (ids.isEmpty() || ids.size() > RedisMessageStore.MAX_IDS_PER_CALL) {
			throw new IllegalArgumentException("A call takes 1 to " + RedisMessageStore.MAX_IDS_PER_CALL
					+ " message ids, but was given " + ids.size());
		}
	}

	/** Each id and its lease token. */
	private static void leases(List<Object> out, List<String> ids, List<String> leaseTokens) {
		for (int i = 0; i < ids.size(); i++) {
			out.add(ids.get(i));
			out.add(leaseTokens.get(i));
		}
	}

	/**
	 * Creates a schedule or gives it another definition.
	 *
	 * @param partitions the topic's number of partitions here
	 * @param name the schedule's name
	 * @param definition its definition
	 * @param nextTickMillis its next tick, should the definition change
	 * @param read the state read with the time the next tick comes from ({@code ""} for
	 * none)
	 */
	record SaveSchedule(int partitions, String name, String definition, long nextTickMillis,
			String read) implements ScriptCodec<@Nullable String> {

		static final Signature<SaveSchedule> SIGNATURE = Signature.of(
				Script.of("save_schedule", Script.Reply.LIST, Key.SCHEDULES, Key.PARTITION_COUNT), "{1 if saved else 0",
				Argument.of("[1] the number of partitions", SaveSchedule::partitions),
				Argument.of("[2] name", SaveSchedule::name), Argument.of("[3] definition", SaveSchedule::definition),
				Argument.of("[4] next tick", SaveSchedule::nextTickMillis),
				Argument.of("[5] the state the caller read", SaveSchedule::read));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		/**
		 * @return the state saved or found, or {@code null} when it is not the one read
		 */
		@Override
		public @Nullable String read(Object reply) {
			List<?> values = (List<?>) reply;
			return (number(values.get(2)) == 1) ? null : text(values.get(1));
		}

	}

	/**
	 * Sends a schedule's due ticks and moves it to its next tick, if its state is still
	 * the one read.
	 *
	 * @param channel the signal channel
	 * @param partition the partition
	 * @param partitions the topic's number of partitions here
	 * @param name the schedule's name
	 * @param read the state read
	 * @param nextTickMillis the new next tick
	 * @param body the stored body of the tick messages
	 * @param ticks the ticks to send
	 */
	record AdvanceSchedule(String channel, String partition, int partitions, String name, String read,
			long nextTickMillis, byte[] body, List<Long> ticks) implements ScriptCodec<Boolean> {

		static final Signature<AdvanceSchedule> SIGNATURE = Signature.of(
				Script.of("advance_schedule", Script.Reply.LIST, Key.SCHEDULES, Key.MESSAGES, Key.SCHEDULED,
						Key.PARTITION_COUNT),
				"{1, messages stored} when advanced", Argument.of("[1] signal channel", AdvanceSchedule::channel),
				Argument.of("[2] topic", AdvanceSchedule::partition),
				Argument.of("[3] the number of partitions", AdvanceSchedule::partitions),
				Argument.of("[4] name", AdvanceSchedule::name), Argument.of("[5] the state", AdvanceSchedule::read),
				Argument.of("[6] the new next tick", AdvanceSchedule::nextTickMillis),
				Argument.of("[7] body", AdvanceSchedule::body),
				Argument.rest("[8..] the ticks to send", (advance, out) -> out.addAll(advance.ticks())));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Boolean read(Object reply) {
			return number(((List<?>) reply).get(0)) == 1;
		}

	}

	/**
	 * Pauses or resumes a schedule.
	 *
	 * @param partitions the topic's number of partitions here
	 * @param name the schedule's name
	 * @param paused whether to pause
	 * @param nextTickMillis on resume, its next tick
	 * @param definition on resume, the definition the next tick comes from ({@code ""}
	 * for any)
	 */
	record PauseSchedule(int partitions, String name, boolean paused, long nextTickMillis,
			String definition) implements ScriptCodec<@Nullable String> {

		static final Signature<PauseSchedule> SIGNATURE = Signature.of(
				Script.of("pause_schedule", Script.Reply.LIST, Key.SCHEDULES, Key.PARTITION_COUNT),
				"{1 if changed else 0", Argument.of("[1] the number of partitions", PauseSchedule::partitions),
				Argument.of("[2] name", PauseSchedule::name),
				Argument.of("[3] 1 to pause", (pause) -> pause.paused() ? 1 : 0),
				Argument.of("[4] on resume, the next tick", PauseSchedule::nextTickMillis),
				Argument.of("[5] on resume, the definition", PauseSchedule::definition));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public @Nullable String read(Object reply) {
			String state = text(((List<?>) reply).get(1));
			return state.isEmpty() ? null : state;
		}

	}

	/**
	 * Removes a schedule, or only the state read.
	 *
	 * @param partitions the topic's number of partitions here
	 * @param name the schedule's name
	 * @param read the state to remove, or {@code ""} for any
	 */
	record RemoveSchedule(int partitions, String name, String read) implements ScriptCodec<Boolean> {

		static final Signature<RemoveSchedule> SIGNATURE = Signature.of(
				Script.of("remove_schedule", Script.Reply.INTEGER, Key.SCHEDULES, Key.PARTITION_COUNT), "1 if removed",
				Argument.of("[1] the number of partitions", RemoveSchedule::partitions),
				Argument.of("[2] name", RemoveSchedule::name),
				Argument.of("[3] the state the caller read", RemoveSchedule::read));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Boolean read(Object reply) {
			return number(reply) == 1;
		}

	}

	/**
	 * Reads the schedules of a partition with the Redis time.
	 */
	record Schedules() implements ScriptCodec<Schedules.Reply> {

		static final Signature<Schedules> SIGNATURE = Signature
			.of(Script.of("schedules", Script.Reply.LIST, Key.SCHEDULES), "{the Redis time");

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Reply read(Object reply) {
			List<?> values = (List<?>) reply;
			Map<String, String> states = new LinkedHashMap<>();
			for (int i = 1; i + 1 < values.size(); i += 2) {
				states.put(text(values.get(i)), text(values.get(i + 1)));
			}
			return new Reply(number(values.get(0)), states);
		}

		/**
		 * The schedules read.
		 *
		 * @param nowMillis the Redis time
		 * @param states each schedule's stored state by name
		 */
		record Reply(long nowMillis, Map<String, String> states) {
		}

	}

	/**
	 * Registers the topic of a schedule's name, forgets it, or reads the registry.
	 *
	 * @param operation {@code claim}, {@code release}, {@code forget-topic} or
	 * {@code read}
	 * @param name the schedule's name ({@code ""} to read)
	 * @param topic its topic ({@code ""} to read)
	 * @param takingFrom on a claim, the topic found registered that the name is taken
	 * from ({@code ""} for none)
	 * @param graceMillis how long after its last claim a name may be taken from another
	 * topic (a claim) or released (a release; 0 for at once), or after a name was last
	 * claimed for it a topic may be forgotten
	 */
	record ScheduleRegistry(String operation, String name, String topic, String takingFrom,
			long graceMillis) implements ScriptCodec<ScheduleRegistry.Reply> {

		static final Signature<ScheduleRegistry> SIGNATURE = Signature.of(
				Script.of("schedule_registry", Script.Reply.LIST, Key.SCHEDULE_REGISTRY),
				"{1 if the name is registered to ARGV[3]",
				Argument.of("[1] 'claim', 'release', 'forget-topic' or 'read'", ScheduleRegistry::operation),
				Argument.of("[2] name", ScheduleRegistry::name), Argument.of("[3] topic", ScheduleRegistry::topic),
				Argument.of("[4] 'claim' only: the topic the caller found registered", ScheduleRegistry::takingFrom),
				Argument.of("[5] ms after its last claim", ScheduleRegistry::graceMillis));

		static ScheduleRegistry read() {
			return new ScheduleRegistry("read", "", "", "", 0);
		}

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Reply read(Object reply) {
			List<?> values = (List<?>) reply;
			Map<String, String> names = new LinkedHashMap<>();
			List<String> topics = new ArrayList<>();
			for (int i = 2; i + 1 < values.size(); i += 2) {
				String field = text(values.get(i));
				if (field.startsWith(CLAIMED_FIELD)) {
					continue;
				}
				if (field.startsWith(TOPIC_FIELD)) {
					topics.add(field.substring(TOPIC_FIELD.length()));
				}
				else {
					names.put(field, text(values.get(i + 1)));
				}
			}
			return new Reply(number(values.get(0)) == 1, text(values.get(1)), names, topics);
		}

		/**
		 * What the registry answered.
		 *
		 * @param done whether the name is registered to the topic after a claim, or was
		 * forgotten by a release
		 * @param registered the topic the name is registered to now ({@code ""} for none)
		 * @param names on a read, every registered name → its topic
		 * @param topics on a read, every topic that has held a schedule
		 */
		record Reply(boolean done, String registered, Map<String, String> names, List<String> topics) {
		}

	}

	/**
	 * Has a partition copy its dead letters; reads whether its watch was absent.
	 */
	record WatchDeadLetters() implements ScriptCodec<Boolean> {

		static final Signature<WatchDeadLetters> SIGNATURE = Signature
			.of(Script.of("watch_dead_letters", Script.Reply.INTEGER, Key.DEAD_LETTERS_WATCH), "1 if it was absent");

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		@Override
		public Boolean read(Object reply) {
			return number(reply) == 1;
		}

	}

	/**
	 * Counts a look at the marker of the queue's data, writing a new one when absent.
	 *
	 * @param token the token of a new marker
	 */
	record DatasetMarker(String token) implements ScriptCodec<String> {

		static final Signature<DatasetMarker> SIGNATURE = Signature.of(
				Script.of("dataset_marker", Script.Reply.LIST, Key.DATASET_MARKER),
				"{1 if written now else 0, the marker after this look}",
				Argument.of("[1] the token of a new marker", DatasetMarker::token));

		@Override
		public Signature<?> signature() {
			return SIGNATURE;
		}

		/**
		 * @return the marker after this look
		 */
		@Override
		public String read(Object reply) {
			return text(((List<?>) reply).get(1));
		}

	}

	private static List<Boolean> flags(Object reply) {
		return ((List<?>) reply).stream().map((flag) -> number(flag) == 1).toList();
	}

	/**
	 * @return a script's "µs until, or -1 for never" as a duration, or {@code null} for
	 * never
	 */
	private static @Nullable Duration microsOrNone(Object value) {
		long micros = number(value);
		return (micros >= 0) ? Duration.ofNanos(micros * 1000) : null;
	}

	private static long number(Object value) {
		return ((Number) value).longValue();
	}

	private static String text(Object value) {
		return new String((byte[]) value, StandardCharsets.UTF_8);
	}

	private static List<String> texts(List<?> values) {
		return values.stream().map(ScriptCodecs::text).toList();
	}

}
