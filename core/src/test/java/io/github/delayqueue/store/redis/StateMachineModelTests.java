package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.ScheduleDefinition;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.redis.QueueModel.ClaimReply;
import io.github.delayqueue.store.redis.QueueModel.Dead;
import io.github.delayqueue.store.redis.QueueModel.ExpiryReply;
import io.github.delayqueue.store.redis.QueueModel.Live;
import io.github.delayqueue.store.redis.QueueModel.ReplayReply;
import io.github.delayqueue.store.redis.QueueModel.SendReply;
import io.github.delayqueue.store.redis.QueueModel.State;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;
import org.springframework.data.redis.core.script.DefaultRedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A randomized, model-based test of the queue's state machine: random sequences of store
 * calls from several simulated clients, each checked against {@link QueueModel}, a plain
 * Java model of what the scripts' headers say they do.
 * <p>
 * <b>What is modeled.</b> Two producers send single messages and batches, with new and
 * reused ids, the same body again or another one, due in the past, in an hour, in five
 * hours (absolute epoch ms) or after a delay of 0 or an hour, a third of them with a
 * priority of 1 to 3; they cancel (mostly a ready message with a priority, whose id is
 * later sent again, due at once with another priority or none, and then mostly promoted
 * while the old id may still wait in the list of its old priority) and reschedule. Three
 * consumers, each with its own consumer id and lease tokens, claim with random limits and
 * early limits under a lease of an hour or of zero (so that it has expired by the next
 * call), and ack, release and extend what they hold in batches (one to four leases, valid
 * and stale mixed, an id sometimes named twice) and retry and dead-letter one at a time,
 * sometimes with a token that is not theirs or no longer valid; they hand back what a
 * claim leased by its record ({@code release_claim}, as a consumer that stops while its
 * claim is unanswered does), mostly their last claim, else one the record no longer
 * holds. A broker promotes (with a lookahead of 0 or of two hours) and expires leases
 * with random limits and maximum attempts; an operator replays and purges dead letters,
 * buried ones ({@code <id>~<time it died>}) included. After a message with a priority
 * dies, its id is mostly sent again (due at once, with another priority or none),
 * promoted, claimed, acknowledged or dead-lettered, and then its dead letters are
 * replayed. At a random step (or never) the topic's dead letters start being listened to:
 * from then on each message that dies is also queued in the dead-letter queue, whose
 * ready list and stored copies are checked (dead-letter headers and the last error added,
 * deduplication window dropped, a body not in the stored format as the payload, no
 * attempt made). Two recurring schedules are saved (with one of two definitions),
 * advanced (mostly from their current state, else from a stale one, which must change
 * nothing) storing zero to three tick messages that then live as any message, paused,
 * resumed and removed; the schedules hash is checked after every step. The model keeps
 * the ready list of each priority with the stale ids that cancel and reschedule leave in
 * it, the priorities hash and the dead priorities hash, and follows claim.lua list by
 * list and chunk by chunk, so it predicts each reply exactly.
 * <p>
 * <b>Groups.</b> From the first step in half the runs, a random one in a quarter (never
 * in the others), four new messages in ten are sent in a group ("a", "b" or "tenant-é"),
 * a body in the stored format with the group header as the producer writes it (the same
 * body again keeps its group, a replacing send may change it or drop it); a message
 * cancelled while ready in a group is mostly sent again with the same due time and
 * priority in another group or none, so that the member the cancel left has the new
 * message's rank. The model keeps the groups hash and the group ready set, stale members
 * included, and predicts promote (a message of a group moves only once due), release,
 * release_claim and lease expiry (back in the group at its rank), ack, cancel and
 * dead-letter (the group dropped) and replay (the group from the header) exactly. A claim
 * that the rotation serves (the topic uses groups and a group has ready messages) is not
 * predicted id by id: the test checks that it leased ready messages only, a message of a
 * group only once due, at most the early limit early, as many due ones as wanted or as
 * there are (while fewer than 1000 ids and members wait), each group's most urgent (then
 * first due) members in order, and removed only members and ids it leased or stale ones;
 * then the model takes the ready lists and the group ready set from Redis. Now and then
 * the rotation's key is deleted before such a claim, which must rebuild it; now and then
 * the group pauses' key (every pause ends): such a claim without a group concurrency puts
 * back the groups parked in the rotation and says more may be waiting, one with a group
 * concurrency is followed by the slots recount that its listener runs, which puts back
 * those with nothing in flight.
 * <p>
 * <b>Group concurrency.</b> A run's claims carry a group concurrency (none, 1 or 2, a
 * third of the runs each; one claim in eight another of these). After every step the
 * group slots hash holds, for each group, its messages in flight (no slot leaked or
 * counted twice, no field at 0), and a group parked in the rotation at its limit (+inf)
 * has members in the group ready set and a slot taken; a claim with a limit never takes a
 * group past it, and a rotation claim takes as many due messages as wanted or as the
 * groups' free slots allow (none of a parked group). At the end of a run that used
 * groups, a drain (what is in flight acknowledged, then claims with a limit and
 * acknowledgements) must leave nothing ready or in flight and no group key.
 * <p>
 * <b>Faults.</b> A dropped reply: a state-changing call is made twice with the same
 * arguments and token, as Lettuce re-sends a command after a reconnect; the pair must act
 * as one request (a claim returns the same messages, ack, retry, dead-letter and release
 * report the lease lost, a claim's hand-back returns nothing more, a send of the same
 * body is not a duplicate). A key of the wrong type: one of the topic's keys (or a
 * consumer's claim record) is overwritten with another type; a call that uses the key
 * must fail with WRONGTYPE and change nothing (every key compared by {@code DUMP} before
 * and after), then the key is restored.
 * <p>
 * <b>Checks after every step.</b> Every key of the topic equals the model (stored
 * messages, schedule, ready list, in-flight deadlines, lease tokens, dead letters with
 * their errors, priorities of stored messages and of dead letters), so every message is
 * in exactly one state and nothing is lost; independently of the model, every stored id
 * is scheduled, in flight or in the ready list, the lease and dead keys agree with their
 * indexes, and a priority belongs to a stored message or a dead letter; the group keys
 * agree (every ready message of a group has its member, each group's count is its
 * members, the rotation holds the groups counted, the tags only those, no message in
 * flight has its member in place; stale members of other ranks are allowed, as cancel and
 * reschedule leave them); {@code stats()} and {@code inspect()} (priority included) agree
 * with the model. Each reply is compared with the model's, which also checks that no
 * message is claimed before its due time minus the lookahead it was promoted with, that
 * claimed messages carry the modeled attempts, and that a token never acks, retries,
 * dead-letters, releases or extends a message leased to another.
 * <p>
 * <b>Time.</b> Due times and lease deadlines are either in the past or an hour or more
 * away from the Redis clock, so that no decision depends on timing: runs must stay under
 * an hour. The Redis time is read around each call to check the times the scripts set.
 * <p>
 * <b>Running.</b> By default three seeds of 300 steps each, then one more with Redis 3 ms
 * away (the store's calls go through a {@link FaultyRedisProxy} that holds every reply
 * that long; the checks read Redis directly), a few seconds each. A failure names its
 * seed and step; run it again with {@code -Ddelay-queue.model.seed=<seed>} (and
 * {@code -Ddelay-queue.model.latency-ms=3} for the seed through the proxy). A long run
 * (about 8 minutes per Redis version: each step reads the whole topic, which grows; keep
 * a run under an hour): <pre>
 * ./mvnw -B -o -pl autoconfigure test -Dtest=StateMachineModelTests \
 *     -Ddelay-queue.model.steps=20000 -Ddelay-queue.model.seeds=1
 * </pre>
 */
class StateMachineModelTests {

	/** The cancel script run directly, so that a request sent again keeps its token. */
	private static final DefaultRedisScript<Long> CANCEL = new DefaultRedisScript<>(
			ScriptSource.read("server_clock") + ScriptSource.read("publish_signal") + ScriptSource.script("cancel"),
			Long.class);

	private static final long HOUR = Duration.ofHours(1).toMillis();

	private static final Duration LONG_LEASE = Duration.ofHours(1);

	private static final int HISTORY = 12;

	/**
	 * Definitions no schedule poller can read (no cron expression, no rate), so that the
	 * application's own leaves these schedules to the test; one of two lines.
	 */
	private static final List<ScheduleDefinition> MODEL_DEFINITIONS = List.of(
			new ScheduleDefinition("model", ScheduleDefinition.Kind.CRON, "model definition 1", "Z", "SKIP", ""),
			new ScheduleDefinition("model", ScheduleDefinition.Kind.FIXED_RATE, "model definition 2", "Z", "SKIP",
					"with: two lines\nsecond"));

	/** The first model definition as stored. */
	private static final String MODEL_DEFINITION = ScheduleFormat.encode(MODEL_DEFINITIONS.get(0));

	private static final Duration PROXY_LATENCY = Duration.ofMillis(3);

	/** The groups a message may be sent in (or none). */
	private static final List<String> GROUPS = List.of("a", "b", "tenant-é");

	@Test
	void randomSequencesOfCallsWithDroppedRepliesAndBrokenKeysLeaveRedisAsTheModelSays() {
		Long fixedSeed = Long.getLong("delay-queue.model.seed");
		long seed = (fixedSeed != null) ? fixedSeed : System.nanoTime();
		int seeds = (fixedSeed != null) ? 1 : Integer.getInteger("delay-queue.model.seeds", 3);
		int steps = Integer.getInteger("delay-queue.model.steps", 300);
		Duration fixedLatency = Duration.ofMillis(Long.getLong("delay-queue.model.latency-ms", 0));
		try (TestStore fixture = TestStore.builder().rememberAtMost(QueueModel.MAX_REMEMBERED).build()) {
			StringRedisTemplate redis = fixture.redis();
			if (fixedSeed == null || fixedLatency.isZero()) {
				RedisMessageStore store = fixture.store();
				for (int i = 0; i < seeds; i++) {
					new Run(seed + i, steps, store, redis, Duration.ZERO).run();
				}
			}
			if (fixedSeed == null || !fixedLatency.isZero()) {
				// One seed more with Redis a few milliseconds away: the store's calls go
				// through a proxy that holds each reply, the checks go straight to Redis.
				Duration latency = (fixedSeed != null) ? fixedLatency : PROXY_LATENCY;
				TestRedis testRedis = TestRedis.shared();
				try (FaultyRedisProxy proxy = FaultyRedisProxy.start(testRedis.host(), testRedis.port());
						TestStore proxied = TestStore.builder()
							.prefix(fixture.prefix())
							.via(proxy.host(), proxy.port())
							.rememberAtMost(QueueModel.MAX_REMEMBERED)
							.build()) {
					proxy.latency(latency);
					new Run((fixedSeed != null) ? fixedSeed : seed + seeds, steps, proxied.store(), redis, latency)
						.run();
				}
			}
		}
	}

	/** One seeded run on a topic of its own. */
	private static final class Run {

		private final long seed;

		private final int steps;

		private final RedisMessageStore store;

		private final StringRedisTemplate redis;

		/** How far the store's Redis is, through a proxy; zero for no proxy. */
		private final Duration latency;

		private final String topic;

		private final TopicKeys keys;

		private final Random random;

		private final QueueModel model = new QueueModel();

		private final List<Consumer> consumers = new ArrayList<>();

		private final List<String> usedIds = new ArrayList<>();

		/**
		 * Ids cancelled while ready with a priority, to send again: id → that priority.
		 */
		private final Map<String, Integer> cancelledWithPriority = new LinkedHashMap<>();

		/**
		 * Ids cancelled while ready in a group, to send again due at the same time with
		 * the same priority in another group or none, so that the member the cancel left
		 * has the rank of the new message: id → {due, priority, index of the group in
		 * {@link #GROUPS}}.
		 */
		private final Map<String, long[]> cancelledInGroup = new LinkedHashMap<>();

		/**
		 * What the next step mostly is, after a cancel of such a message or the death of
		 * a message with a priority.
		 */
		private Followup followup = Followup.NONE;

		/**
		 * A dead letter with a priority whose id the next steps mostly send again (with
		 * another priority or none), promote, claim, acknowledge or dead-letter, and then
		 * replay; {@code null} for none.
		 */
		private @Nullable String revived;

		private final Deque<String> history = new ArrayDeque<>();

		private final Map<String, Integer> counts = new TreeMap<>();

		private long base;

		private int step;

		private int ids;

		private int bodies;

		/** The deduplication window of each id, once it has one. */
		private final Map<String, Long> windows = new HashMap<>();

		/**
		 * The step before which the topic's dead letters start being listened to (each
		 * message that dies is then queued in its dead-letter queue too); past the last
		 * step for a third of the runs.
		 */
		private final int watchAt;

		/**
		 * The step from which new messages may have a group (four in ten of them, one of
		 * {@link #GROUPS}): the first for half the runs, a random one for a quarter, past
		 * the last step for the others, which keep every claim predicted id by id.
		 */
		private final int groupsAt;

		/**
		 * The group concurrency of most of this run's claims (0 for none, 1 or 2, a third
		 * of the runs each); one claim in eight carries another one of these, as while
		 * the instances of a topic are being configured anew.
		 */
		private final int groupLimit;

		/**
		 * Draws the group concurrency of claims and the drain at the end: apart from
		 * {@link #random}, so that a seed makes the same calls as before the limits were
		 * modeled.
		 */
		private final Random limits;

		/**
		 * Draws the loss of the group pauses before a claim: apart from {@link #random}
		 * and {@link #limits}, so that a seed makes the same calls as before the loss was
		 * modeled.
		 */
		private final Random losses;

		Run(long seed, int steps, RedisMessageStore store, StringRedisTemplate redis, Duration latency) {
			this.seed = seed;
			this.steps = steps;
			this.store = store;
			this.redis = redis;
			this.latency = latency;
			this.topic = "model-" + seed;
			this.keys = store.keys(this.topic);
			this.random = new Random(seed);
			for (int i = 0; i < 3; i++) {
				this.consumers.add(new Consumer("consumer-" + i));
			}
			this.watchAt = 1 + this.random.nextInt(steps + steps / 2);
			int groupsFrom = this.random.nextInt(4);
			this.groupsAt = (groupsFrom == 0) ? steps + 1 : (groupsFrom == 1) ? 1 + this.random.nextInt(steps) : 1;
			this.limits = new Random(seed * 31 + 17);
			this.groupLimit = this.limits.nextInt(3);
			this.losses = new Random(seed * 37 + 5);
		}

		void run() {
			System.out.println("StateMachineModelTests: seed " + this.seed + ", " + this.steps + " steps"
					+ (this.latency.isZero() ? "" : ", Redis " + this.latency.toMillis() + " ms away")
					+ " (replay with " + replayProperties() + ")");
			long started = System.nanoTime();
			this.base = now();
			for (this.step = 1; this.step <= this.steps; this.step++) {
				if (this.step == this.watchAt) {
					note("listen to the dead letters");
					this.store.watchDeadLetters(this.topic);
					this.model.watchingDeadLetters = true;
				}
				Operation operation = nextOperation();
				double fault = this.random.nextDouble();
				if (fault < 0.05) {
					breakKeyAndRun(operation);
				}
				else if (fault < 0.20 && operation.resendable()) {
					runTwice(operation);
				}
				else {
					note(operation.toString());
					if (operation.servedByRotation() && this.random.nextInt(10) == 0) {
						// The rotation lost (as when its key was moved aside): the claim
						// rebuilds it from the counts.
						note("the group rotation lost before the claim");
						count("rotation lost before a claim");
						this.redis.delete(this.keys.groupRotation());
					}
					boolean pausesLost = operation.servedByRotation() && this.losses.nextInt(10) == 0;
					if (pausesLost) {
						// The group pauses lost (deleted, evicted, moved aside): every
						// pause
						// ends; a claim without a group concurrency puts back the groups
						// parked for one.
						note("the group pauses lost before the claim");
						count("group pauses lost before a claim");
						this.redis.delete(this.keys.groupPauses());
					}
					runOnce(operation);
					if (pausesLost && operation.groupConcurrency() > 0) {
						// A claim with one leaves them to the slots recount, which its
						// listener runs every 30 s.
						note("slots recount after the claim");
						this.store.topic(this.topic).recountGroupSlots().join();
					}
				}
				check();
			}
			if (this.groupsAt <= this.steps) {
				this.step = this.steps;
				drain();
			}
			count("claim dropped an id of another priority", this.model.droppedOfAnotherPriority);
			count("claim put a due message of a group found in a ready list in its group", this.model.joinedFromLists);
			count("back in their group (released, expired, replayed)", this.model.backInGroup);
			count("remembered names forgotten beside another name of their id",
					this.model.forgottenBesideANameOfTheirId);
			count("dead letters queued for their listeners", this.model.queuedDeadLetters.size());
			count("dead letters queued with a priority",
					(int) this.model.queuedDeadLetters.stream().filter((dead) -> dead.priority() > 0).count());
			System.out.println("StateMachineModelTests: seed " + this.seed + " passed " + this.steps + " steps in "
					+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms: " + this.counts);
		}

		// --- Faults
		// -----------------------------------------------------------------------------

		private void runOnce(Operation operation) {
			long before = now();
			Object reply = operation.run();
			operation.expect(reply, before, now());
		}

		private void runTwice(Operation operation) {
			note(operation + " (reply dropped, sent again)");
			count("dropped reply");
			long before = now();
			Object first = operation.run();
			operation.expect(first, before, now());
			before = now();
			Object second = operation.run();
			operation.expect(second, before, now());
			operation.expectSentAgain(first, second);
		}

		/**
		 * The key of another type that a call which did not fail ran with, while its
		 * reply is checked.
		 */
		private @Nullable String brokenDuringCall;

		private boolean isReadyList(String key) {
			if (key.equals(this.keys.ready())) {
				return true;
			}
			for (int priority = 1; priority <= Script.MAX_PRIORITY; priority++) {
				if (key.equals(this.keys.ready(priority))) {
					return true;
				}
			}
			return false;
		}

		private void breakKeyAndRun(Operation operation) {
			// Half the time a key the call uses on every call, so that it must fail.
			List<String> candidates = new ArrayList<>(operation.alwaysTouched());
			if (this.random.nextBoolean()) {
				candidates = new ArrayList<>(this.keys.all());
				candidates.addAll(operation.extraKeys());
			}
			candidates.sort(null);
			String key = candidates.get(this.random.nextInt(candidates.size()));
			note(operation + " (with " + key + " of the wrong type)");
			count("wrong type");
			Map<String, Dump> dumps = dumpAll(operation);
			Map<String, Object> intact = contents(operation);
			DataType type = this.keys.types().getOrDefault(key, DataType.STRING);
			writeWrongType(key, type);
			Map<String, Object> broken = contents(operation);
			long before = now();
			Object reply;
			try {
				reply = operation.run();
			}
			catch (DataAccessException ex) {
				count("wrong type refused");
				assertThat(WrongTypeKeys.isWrongType(ex)).as(describe("a WRONGTYPE failure: " + ex)).isTrue();
				assertThat(contents(operation)).as(describe("a call that failed changed nothing")).isEqualTo(broken);
				restore(key, dumps.get(key));
				assertThat(contents(operation)).as(describe("the broken key restored")).isEqualTo(intact);
				return;
			}
			long after = now();
			assertThat(operation.alwaysTouched())
				.as(describe(operation + " uses " + key + " on every call, "
						+ "so it should have failed with WRONGTYPE, but returned " + reply))
				.doesNotContain(key);
			// The call did not use the key at all: put it back and check the call as any
			// other.
			restore(key, dumps.get(key));
			this.brokenDuringCall = key;
			try {
				operation.expect(reply, before, after);
			}
			finally {
				this.brokenDuringCall = null;
			}
		}

		private void writeWrongType(String key, DataType expected) {
			List<DataType> others = new ArrayList<>(
					List.of(DataType.STRING, DataType.LIST, DataType.HASH, DataType.ZSET, DataType.SET));
			others.remove(expected);
			this.redis.delete(key);
			switch (others.get(this.random.nextInt(others.size()))) {
				case LIST -> this.redis.opsForList().rightPush(key, "wrong type");
				case HASH -> this.redis.opsForHash().put(key, "wrong", "type");
				case ZSET -> this.redis.opsForZSet().add(key, "wrong type", 1);
				case SET -> this.redis.opsForSet().add(key, "wrong type");
				default -> this.redis.opsForValue().set(key, "wrong type");
			}
		}

		private Map<String, Dump> dumpAll(Operation operation) {
			Map<String, Dump> dumps = new TreeMap<>();
			for (String key : snapshotKeys(operation)) {
				dumps.put(key, this.redis.execute((RedisCallback<Dump>) (connection) -> {
					byte[] name = key.getBytes(StandardCharsets.UTF_8);
					byte[] value = connection.keyCommands().dump(name);
					Long ttl = connection.keyCommands().pTtl(name);
					return (value != null) ? new Dump(value, (ttl != null && ttl > 0) ? ttl : 0) : null;
				}));
			}
			return dumps;
		}

		/**
		 * What every key holds, read by type: {@code DUMP} is no good for comparing, as a
		 * restored hash or set may serialize its entries in another order.
		 */
		private Map<String, Object> contents(Operation operation) {
			Map<String, Object> contents = new TreeMap<>();
			for (String key : snapshotKeys(operation)) {
				DataType type = this.redis.type(key);
				Long ttl = this.redis.getExpire(key);
				boolean shortLived = ttl != null && ttl >= 0 && ttl < 60 && !key.equals(this.keys.cancels());
				if (type == null || type == DataType.NONE || shortLived) {
					// Missing, or the claim record of a zero lease, which lives a
					// millisecond (the cancels' tokens live a minute after the last
					// cancel: longer than a run).
					continue;
				}
				contents.put(key, switch (type) {
					case STRING -> new String(
							this.redis.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands()
								.get(key.getBytes(StandardCharsets.UTF_8))),
							StandardCharsets.ISO_8859_1);
					case LIST -> this.redis.opsForList().range(key, 0, -1);
					case HASH -> hash(key);
					case ZSET -> this.redis.opsForZSet()
						.rangeWithScores(key, 0, -1)
						.stream()
						.map((tuple) -> tuple.getValue() + "=" + tuple.getScore())
						.toList();
					case SET -> new TreeSet<>(this.redis.opsForSet().members(key));
					default -> type;
				});
			}
			return contents;
		}

		private List<String> snapshotKeys(Operation operation) {
			List<String> all = new ArrayList<>(this.keys.all());
			this.consumers.forEach((consumer) -> all.add(this.keys.claimRecord(consumer.id)));
			all.addAll(operation.extraKeys());
			return all.stream().distinct().toList();
		}

		private void restore(String key, Dump dump) {
			this.redis.delete(key);
			if (dump != null) {
				this.redis.execute((RedisCallback<Object>) (connection) -> {
					connection.keyCommands().restore(key.getBytes(StandardCharsets.UTF_8), dump.ttl(), dump.value());
					return null;
				});
			}
		}

		// --- Liveness
		// -------------------------------------------------------------------------

		/**
		 * Drains the topic as consumers with a group concurrency do (the run's, or 1 or 2
		 * for a run without): what is in flight is acknowledged, due messages promoted,
		 * then claims and acknowledgements of part of what is held alternate until a
		 * claim finds nothing and nothing is held. No group has more in flight than the
		 * limit after any claim, and at the end nothing is ready or in flight and the
		 * group keys are empty: no group stays parked with nothing in flight, no slot is
		 * left taken. The model is not followed from here: checks read Redis.
		 */
		private void drain() {
			int groupConcurrency = (this.groupLimit > 0) ? this.groupLimit : 1 + this.limits.nextInt(2);
			note("drain with group concurrency " + groupConcurrency);
			// Strict-order waits (an hour) end only with time, which the drain does not
			// wait for: their key goes, as if their time had come, and the resumes end
			// the
			// pauses that hold them.
			this.redis.delete(this.keys.groupWaits());
			for (String group : pauses().keySet()) {
				this.store.resumeGroup(this.topic, group);
			}
			Map<String, String> leases = hash(this.keys.leases());
			if (!leases.isEmpty()) {
				List<String> leased = new ArrayList<>(leases.keySet());
				Transitions.ack(this.store, this.topic, leased, leased.stream().map(leases::get).toList());
			}
			Transitions.promote(this.store, this.topic, 1000, Duration.ZERO);
			Map<String, String> held = new LinkedHashMap<>();
			int claims = 0;
			int drained = 0;
			while (true) {
				assertThat(claims).as(describe("drain: ends")).isLessThan(10_000);
				String token = "drainer." + (++claims);
				int limit = 1 + this.limits.nextInt(4);
				ClaimResult result = Transitions.claim(this.store, this.topic, "drainer", token, limit, 1000,
						LONG_LEASE, null, groupConcurrency);
				result.messages().forEach((message) -> held.put(message.id(), token));
				drained += result.messages().size();
				Map<String, String> groups = hash(this.keys.groups());
				Map<String, Integer> inFlight = new TreeMap<>();
				zset(this.keys.inFlight()).keySet()
					.stream()
					.filter(groups::containsKey)
					.forEach((id) -> inFlight.merge(groups.get(id), 1, Integer::sum));
				int claim = claims;
				inFlight.forEach((group, n) -> assertThat(n)
					.as(describe("drain: claim " + claim + " left group " + group + " within its concurrency"))
					.isLessThanOrEqualTo(groupConcurrency));
				if (held.isEmpty()) {
					break;
				}
				// Settles the oldest held, one or more.
				List<String> settled = new ArrayList<>(held.keySet()).subList(0, 1 + this.limits.nextInt(held.size()));
				List<Boolean> acked = Transitions.ack(this.store, this.topic, settled,
						settled.stream().map(held::get).toList());
				assertThat(acked).as(describe("drain: held leases acknowledged")).containsOnly(true);
				settled.forEach(held::remove);
			}
			count("drained", drained);
			count("drain claims", claims);
			TopicStats stats = this.store.stats(this.topic);
			assertThat(List.of(stats.ready(), stats.inFlight()))
				.as(describe("drain: nothing ready or in flight after " + claims + " claims with group concurrency "
						+ groupConcurrency + "; rotation "
						+ this.redis.opsForZSet()
							.rangeWithScores(this.keys.groupRotation(), 0, -1)
							.stream()
							.map((tuple) -> tuple.getValue() + "=" + tuple.getScore())
							.toList()
						+ ", slots " + hash(this.keys.groupSlots()) + ", counts " + hash(this.keys.groupCounts())))
				.containsExactly(0L, 0L);
			assertThat(hash(this.keys.groupSlots())).as(describe("drain: no group slot left taken")).isEmpty();
			assertThat(hash(this.keys.groupCounts())).as(describe("drain: no group counted ready")).isEmpty();
			assertThat(this.redis.opsForZSet().size(this.keys.groupRotation()))
				.as(describe("drain: no group left in the rotation"))
				.isZero();
		}

		// --- Operations
		// -------------------------------------------------------------------------

		private Operation nextOperation() {
			if (this.step >= this.groupsAt && this.limits.nextInt(25) == 0) {
				return pauseOrResumeGroup();
			}
			int pick = this.random.nextInt(108);
			Consumer consumer = this.consumers.get(this.random.nextInt(this.consumers.size()));
			// Mostly, a ready message with a priority cancelled is sent again, promoted
			// and claimed in the next steps, so that the claim meets its old id in the
			// list of its old priority and its new one in the list of its new priority;
			// and the id of a message with a priority that died is sent again (another
			// priority or none), promoted, claimed, acknowledged or dead-lettered, and
			// its dead letters replayed, so that each keeps its own priority.
			Followup followup = this.followup;
			this.followup = Followup.NONE;
			if (followup != Followup.NONE && this.random.nextInt(10) < followup.odds) {
				Operation next = switch (followup) {
					case SEND -> send(Followup.SEND);
					case REVIVE -> send(Followup.REVIVE);
					case PROMOTE -> {
						this.followup = Followup.CLAIM;
						yield promote();
					}
					case SETTLE -> settleRevived();
					case REPLAY -> replayRevived();
					default -> claim(consumer);
				};
				if (next != null) {
					return next;
				}
			}
			if (pick < 20) {
				return send(Followup.NONE);
			}
			if (pick < 30) {
				return promote();
			}
			if (pick < 45) {
				return claim(consumer);
			}
			if (pick < 54) {
				return ack(consumer);
			}
			if (pick < 59) {
				return retry(consumer);
			}
			if (pick < 63) {
				return deadLetter(consumer, pickLease(consumer));
			}
			if (pick < 64) {
				return release(consumer);
			}
			if (pick < 67) {
				return releaseClaim(consumer);
			}
			if (pick < 71) {
				return extendLeases(consumer);
			}
			if (pick < 78) {
				return expireLeases();
			}
			if (pick < 84) {
				return cancel();
			}
			if (pick < 90) {
				return reschedule();
			}
			if (pick < 96) {
				return replay(pickDeadIds());
			}
			if (pick < 100) {
				return purge();
			}
			if (pick < 102) {
				return saveSchedule();
			}
			if (pick < 105) {
				return advanceSchedule();
			}
			if (pick < 107) {
				return pauseSchedule();
			}
			return removeSchedule();
		}

		// --- Group pauses: the group pauses ZSET; claims pass a paused group over.

		/**
		 * Pauses a group until it is resumed, for an hour or for 1 ms (ended by the next
		 * claims), or resumes one; the reply and the pauses are checked against the
		 * pauses read before the call (a pause that ends during the call may read either
		 * way).
		 */
		private Operation pauseOrResumeGroup() {
			String group = GROUPS.get(this.limits.nextInt(GROUPS.size()));
			int kind = this.limits.nextInt(4);
			Duration length = switch (kind) {
				case 0 -> null;
				case 1 -> Duration.ofHours(1);
				default -> Duration.ofMillis(1);
			};
			boolean resume = kind == 3;
			return new Operation(
					(resume ? "resume group " : "pause group ") + group
							+ ((!resume && length != null) ? " for " + length.toMillis() + " ms" : ""),
					resume ? new String[] { this.keys.groupPauses(), this.keys.cancels() }
							: new String[] { this.keys.groupPauses() }) {

				/** The group's pause end read before the call, or {@code null}. */
				private @Nullable Double untilBefore;

				/** The group's strict-order wait's end read before the call, or none. */
				private @Nullable Double waitBefore;

				@Override
				Object run() {
					this.untilBefore = pauseOf(group);
					this.waitBefore = waitOf(group);
					if (resume) {
						return Run.this.store.resumeGroup(Run.this.topic, group);
					}
					Instant until = Run.this.store.pauseGroup(Run.this.topic, group, length);
					return (until != null) ? until : "until resumed";
				}

				@Override
				void expect(Object reply, long before, long after) {
					count(resume ? "group resumes" : "group pauses");
					Double until = this.untilBefore;
					Double wait = this.waitBefore;
					if (wait != null && wait > after) {
						count(resume ? "group resumes while it waits" : "group pauses while it waits");
					}
					if (resume && wait != null && wait > after) {
						assertThat(pauseOf(group)).as(describe("a resumed group stays paused while it waits"))
							.isEqualTo(wait);
						if (until != null && until > after) {
							assertThat(reply).as(describe("resume of a paused group")).isEqualTo(true);
						}
						return;
					}
					if (resume) {
						assertThat(pauseOf(group)).as(describe("a resumed group has no pause")).isNull();
						if (until == null || until <= before) {
							assertThat(reply).as(describe("resume of a group not paused")).isEqualTo(false);
						}
						else if (until > after) {
							assertThat(reply).as(describe("resume of a paused group")).isEqualTo(true);
						}
						return;
					}
					Double now = pauseOf(group);
					if (length == null) {
						assertThat(reply).isEqualTo("until resumed");
						assertThat(now).as(describe("a pause until resumed")).isEqualTo(Double.POSITIVE_INFINITY);
					}
					else {
						long ends = ((Instant) reply).toEpochMilli();
						if (wait != null && wait > after + length.toMillis()) {
							assertThat(ends).as(describe("the pause ends with the wait")).isEqualTo(wait.longValue());
						}
						else if (wait == null || wait < before + length.toMillis()) {
							assertThat(ends).as(describe("the pause ends its length after the call"))
								.isBetween(before + length.toMillis(), after + length.toMillis());
						}
						assertThat(now).as(describe("the pause's end stored")).isEqualTo((double) ends);
					}
					Double score = (Run.this.redis.type(Run.this.keys.groupRotation()) == DataType.ZSET)
							? Run.this.redis.opsForZSet().score(Run.this.keys.groupRotation(), group) : null;
					if (score != null) {
						assertThat(score).as(describe("a paused group is parked in the rotation"))
							.isEqualTo(Double.POSITIVE_INFINITY);
					}
				}

			};
		}

		/**
		 * @return when the group's strict-order wait ends, or {@code null} if it has none
		 * or the waits' key is of another type
		 */
		private @Nullable Double waitOf(String group) {
			if (this.redis.type(this.keys.groupWaits()) != DataType.ZSET) {
				return null;
			}
			return this.redis.opsForZSet().score(this.keys.groupWaits(), group);
		}

		/**
		 * @return when the group's pause ends (+inf until resumed), or {@code null} if it
		 * has none or the pauses' key is of another type
		 */
		private @Nullable Double pauseOf(String group) {
			if (this.redis.type(this.keys.groupPauses()) != DataType.ZSET) {
				return null;
			}
			return this.redis.opsForZSet().score(this.keys.groupPauses(), group);
		}

		/**
		 * @return the groups paused at a time: their pause ends after it
		 */
		private Set<String> pausedAt(long millis) {
			return pauses().entrySet()
				.stream()
				.filter((pause) -> pause.getValue() > millis)
				.map(Map.Entry::getKey)
				.collect(Collectors.toSet());
		}

		/**
		 * @return each paused group with when its pause ends (+inf until resumed), ended
		 * ones that no claim removed yet included
		 */
		private Map<String, Double> pauses() {
			if (this.redis.type(this.keys.groupPauses()) != DataType.ZSET) {
				return Map.of();
			}
			Map<String, Double> pauses = new TreeMap<>();
			this.redis.opsForZSet()
				.rangeWithScores(this.keys.groupPauses(), 0, -1)
				.forEach((tuple) -> pauses.put(tuple.getValue(), tuple.getScore()));
			return pauses;
		}

		// --- Schedules: a partition's schedules hash, and the tick messages that
		// advancing one stores.

		private String pickSchedule() {
			return List.of("sched-a", "sched-b").get(this.random.nextInt(2));
		}

		private long pickTick() {
			return this.base + List.of(-HOUR, HOUR, 2 * HOUR, 5 * HOUR).get(this.random.nextInt(4))
					+ this.random.nextInt(1000);
		}

		private Operation saveSchedule() {
			String name = pickSchedule();
			ScheduleDefinition definition = MODEL_DEFINITIONS.get(this.random.nextInt(2));
			long next = pickTick();
			String current = this.model.schedules.get(name);
			// Mostly the state as it is; else one read before another instance changed
			// it.
			String read = (this.random.nextInt(10) < 7) ? ((current != null) ? current : "")
					: List.of("", pickTick() + ":0:" + MODEL_DEFINITION).get(this.random.nextInt(2));
			return new Operation("save schedule " + name + " next " + next + " read " + read.replace('\n', ' '),
					this.keys.schedules()) {

				@Override
				Object run() {
					ScheduleState saved = Run.this.store.schedules()
						.save(Run.this.topic, name, definition, next,
								read.isEmpty() ? null : ScheduleFormat.state(name, Run.this.topic, read));
					return (saved != null) ? saved.stored() : "changed meanwhile";
				}

				@Override
				void expect(Object reply, long before, long after) {
					assertThat(reply).as(describe("schedule saved"))
						.isEqualTo(Run.this.model.saveSchedule(name, ScheduleFormat.encode(definition), next, read));
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same save again changes nothing")).isEqualTo(first);
				}

			};
		}

		private Operation advanceSchedule() {
			String name = pickSchedule();
			String current = this.model.schedules.get(name);
			String read = (current != null && this.random.nextInt(10) < 7) ? current
					: pickTick() + ":" + this.random.nextInt(2) + ":" + MODEL_DEFINITION;
			long next = pickTick();
			List<Long> ticks = new ArrayList<>(new TreeSet<>(this.random.ints(this.random.nextInt(4), 0, 4)
				.mapToObj((i) -> this.base + (i - 1) * HOUR)
				.toList()));
			String body = "tick of " + name;
			if (current != null && current.equals(read)) {
				count("schedule advanced");
			}
			return new Operation("advance schedule " + name + " from " + read.substring(0, read.indexOf(':') + 2)
					+ " to " + next + " sending " + ticks, this.keys.schedules()) {

				@Override
				Object run() {
					return Run.this.store.schedules()
						.advance(ScheduleFormat.state(name, Run.this.topic, read), next, ticks,
								body.getBytes(StandardCharsets.UTF_8));
				}

				@Override
				void expect(Object reply, long before, long after) {
					assertThat(reply).as(describe("schedule advanced"))
						.isEqualTo(Run.this.model.advanceSchedule(name, read, next, ticks, body));
					ticks.forEach((tick) -> Run.this.usedIds.add(name + "~" + tick));
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same advance again finds the state changed")).isEqualTo(false);
				}

			};
		}

		private Operation pauseSchedule() {
			String name = pickSchedule();
			boolean paused = this.random.nextBoolean();
			long next = pickTick();
			return new Operation((paused ? "pause" : "resume") + " schedule " + name, this.keys.schedules()) {

				@Override
				Object run() {
					ScheduleState state = Run.this.store.schedules().pause(Run.this.topic, name, paused, next);
					return (state != null) ? state.stored() : "none";
				}

				@Override
				void expect(Object reply, long before, long after) {
					String expected = Run.this.model.pauseSchedule(name, paused, next);
					assertThat(reply).as(describe("schedule paused or resumed"))
						.isEqualTo((expected != null) ? expected : "none");
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same pause again changes nothing")).isEqualTo(first);
				}

			};
		}

		private Operation removeSchedule() {
			String name = pickSchedule();
			String current = this.model.schedules.get(name);
			// Mostly any state (a remove); else only the state read, current or stale
			// (a poller removing a schedule saved on two topics at once).
			int kind = this.random.nextInt(10);
			String read = (kind < 6) ? null
					: (current != null && kind < 8) ? current : pickTick() + ":0:" + MODEL_DEFINITION;
			return new Operation("remove schedule " + name + ((read != null) ? " read " + read.replace('\n', ' ') : ""),
					this.keys.schedules()) {

				@Override
				Object run() {
					return Run.this.store.schedules()
						.remove(Run.this.topic, name,
								(read != null) ? ScheduleFormat.state(name, Run.this.topic, read) : null);
				}

				@Override
				void expect(Object reply, long before, long after) {
					assertThat(reply).as(describe("schedule removed"))
						.isEqualTo(Run.this.model.removeSchedule(name, read));
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same remove again finds nothing")).isEqualTo(false);
				}

			};
		}

		/**
		 * @return another group than the one given, or none
		 */
		private @Nullable String otherGroup(String group) {
			List<String> others = new ArrayList<>(GROUPS);
			others.remove(group);
			others.add(null);
			return others.get(this.random.nextInt(others.size()));
		}

		/**
		 * A send of one or more messages.
		 * @param followup {@link Followup#SEND} to send again, first, an id cancelled
		 * while ready with a priority, if there is one; {@link Followup#REVIVE} to send
		 * first a new message of the {@link #revived} dead letter's id, due at once, with
		 * another priority or none; else {@link Followup#NONE}
		 */
		private Operation send(Followup followup) {
			boolean again = followup == Followup.SEND;
			String revive = (followup == Followup.REVIVE) ? this.revived : null;
			int size = (this.random.nextInt(10) < 6) ? 1 : 2 + this.random.nextInt(4);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < size; i++) {
				String id;
				Integer oldPriority = null;
				long[] regrouped = null;
				if (revive != null && i == 0) {
					id = revive;
				}
				else if (!messages.isEmpty() && this.random.nextInt(10) == 0) {
					id = messages.get(this.random.nextInt(messages.size())).id();
				}
				else if (!this.cancelledWithPriority.isEmpty() && ((again && i == 0) || this.random.nextInt(10) == 0)) {
					// Sent again after a cancel while ready, due at once: its id may
					// still
					// wait in the list of its old priority.
					List<String> cancelled = new ArrayList<>(this.cancelledWithPriority.keySet());
					id = cancelled.get(this.random.nextInt(cancelled.size()));
					oldPriority = this.cancelledWithPriority.remove(id);
				}
				else if (!this.cancelledInGroup.isEmpty() && ((again && i == 0) || this.random.nextInt(10) == 0)) {
					// Sent again after a cancel while ready in a group, with its rank, in
					// another group or none: the old member must not stand for it.
					List<String> cancelled = new ArrayList<>(this.cancelledInGroup.keySet());
					id = cancelled.get(this.random.nextInt(cancelled.size()));
					regrouped = this.cancelledInGroup.remove(id);
				}
				else if (!this.usedIds.isEmpty() && this.random.nextInt(10) < 3) {
					id = this.usedIds.get(this.random.nextInt(this.usedIds.size()));
				}
				else {
					id = "m" + (++this.ids);
					this.usedIds.add(id);
				}
				Live stored = this.model.live.get(id);
				// Half the new bodies in the stored format, with headers (the error of a
				// retry goes there), half not (their bodies are kept as they are).
				// A deduplicated body's window depends on its id only: hours apart from
				// id
				// to id, so that the ids forgotten first are known.
				long window = this.windows.computeIfAbsent(id, (any) -> (1 + this.windows.size()) * HOUR);
				// A group for four new messages in ten once groups are used. The same
				// body again keeps the stored message's group (its header says it);
				// another body may have another group or none. A body in the stored
				// format carries the group header, as the producer writes it.
				boolean sameBody = stored != null && regrouped == null && this.random.nextBoolean();
				String group = sameBody ? this.model.groups.get(id)
						: (regrouped != null) ? otherGroup(GROUPS.get((int) regrouped[2]))
								: (this.step >= this.groupsAt && this.random.nextInt(10) < 4)
										? GROUPS.get(this.random.nextInt(GROUPS.size())) : null;
				String body = sameBody ? stored.body : switch (this.random.nextInt(4)) {
					case 0, 1 -> "body-" + (++this.bodies);
					case 2 -> QueueModel.encodedBody(this.random.nextInt(3), "body-" + (++this.bodies), -1, group);
					default -> QueueModel.encodedBody(this.random.nextInt(3), "body-" + (++this.bodies), window, group);
				};
				boolean deduplicated = QueueModel.deduplicationWindow(body) != null;
				byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
				NewMessage message = switch (this.random.nextInt(5)) {
					case 0 -> new NewMessage(id, false, this.base - HOUR - this.random.nextInt(60_000), bytes);
					case 1 -> new NewMessage(id, false, this.base + HOUR + this.random.nextInt(600_000), bytes);
					case 2 -> new NewMessage(id, false, this.base + 5 * HOUR + this.random.nextInt(600_000), bytes);
					case 3 -> new NewMessage(id, true, 0, bytes);
					default -> new NewMessage(id, true, HOUR, bytes);
				};
				if (revive != null && i == 0) {
					// Its dead letter's priority is 1 to 6: another one is 1 to 3.
					int deadPriority = this.model.deadPriorities.getOrDefault(id, 0);
					int priority = this.random.nextBoolean() ? 0 : deadPriority % 3 + 1;
					message = new NewMessage(id, true, 0, bytes).withPriority(priority);
					count("sent the id of a dead letter with a priority");
					this.followup = Followup.PROMOTE;
				}
				else if (oldPriority != null) {
					// Another priority than before, mostly a lower one (or none), whose
					// list
					// claim reads after the old one.
					int priority = (this.random.nextInt(4) > 0) ? this.random.nextInt(oldPriority)
							: Math.min(Script.MAX_PRIORITY, oldPriority + 1 + this.random.nextInt(3));
					message = new NewMessage(id, true, 0, bytes).withPriority(priority);
					count("sent again after a cancel while ready");
					this.followup = Followup.PROMOTE;
				}
				else if (regrouped != null) {
					message = new NewMessage(id, false, regrouped[0], bytes).withPriority((int) regrouped[1]);
					count("sent again after a cancel while ready in a group");
					this.followup = Followup.PROMOTE;
				}
				else if (this.random.nextInt(3) == 0) {
					message = message.withPriority(1 + this.random.nextInt(3));
					count("sent with a priority");
				}
				if (deduplicated) {
					message = message.deduplicating();
					count("sent with a deduplication window");
				}
				if (group != null) {
					message = message.inGroup(group);
					count("sent in a group");
				}
				messages.add((this.random.nextInt(4) == 0) ? message.replacingPending() : message);
			}
			return new Operation("send " + messages.stream()
				.map((message) -> message.id() + "(" + (message.relative() ? "+" : "@") + message.when() + ", "
						+ new String(message.body(), StandardCharsets.UTF_8)
						+ (message.replaceIfPending() ? ", replace" : "")
						+ ((message.priority() > 0) ? ", priority " + message.priority() : "")
						+ ((message.group() != null) ? ", group " + message.group() : "") + ")")
				.toList(), this.keys.messages(), this.keys.scheduled()) {

				@Override
				Object run() {
					return Run.this.store.send(Run.this.topic, messages);
				}

				@Override
				void expect(Object reply, long before, long after) {
					@SuppressWarnings("unchecked")
					List<Sent> results = (List<Sent>) reply;
					List<Long> dues = new ArrayList<>();
					for (int i = 0; i < messages.size(); i++) {
						NewMessage message = messages.get(i);
						dues.add(message.relative() ? results.get(i).dueAtMillis() : message.when());
					}
					for (int i = 0; i < messages.size(); i++) {
						NewMessage message = messages.get(i);
						if (message.relative() && !Run.this.model.live.containsKey(message.id())
								&& !Run.this.model.remembered.containsKey(message.id())
								&& messages.subList(0, i).stream().noneMatch((m) -> m.id().equals(message.id()))) {
							assertThat(dues.get(i)).as(describe("due time of " + message.id() + " from Redis time"))
								.isBetween(before + message.when(), after + message.when());
						}
					}
					// Due when the script ran: at or before the call's start surely,
					// after its end surely not; in between, as Redis holds it.
					List<Boolean> dueWhenSent = new ArrayList<>();
					for (int i = 0; i < messages.size(); i++) {
						NewMessage message = messages.get(i);
						long due = dues.get(i);
						dueWhenSent.add(message.relative() ? message.when() == 0
								: (due <= before || (due <= after && Run.this.redis.opsForZSet()
									.score(Run.this.keys.scheduled(), message.id()) == null)));
					}
					for (NewMessage message : messages) {
						QueueModel.Live stored = Run.this.model.live.get(message.id());
						if (message.replaceIfPending() && stored != null && stored.state == QueueModel.State.READY
								&& Run.this.model.waiting.contains(message.id())) {
							count("replacing sends of a message waiting in its group");
						}
					}
					List<SendReply> expected = Run.this.model.send(messages, dues, dueWhenSent);
					List<SendReply> actual = new ArrayList<>();
					for (int i = 0; i < results.size(); i++) {
						Sent result = results.get(i);
						boolean remembered = expected.get(i).due() == QueueModel.REMEMBERED_DUE;
						if (remembered) {
							count("refused: remembered");
							assertThat(result.dueAtMillis()).as(describe("a remembered id's window ends later"))
								.isGreaterThan(before);
						}
						actual.add(new SendReply(result.duplicate(), result.replaced(),
								remembered ? QueueModel.REMEMBERED_DUE : result.dueAtMillis()));
					}
					assertThat(actual).as(describe("send results")).containsExactlyElementsOf(expected);
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					if (messages.stream().anyMatch(NewMessage::replaceIfPending)) {
						// A replacing send again replaces what the first stored or
						// replaced, so it may
						// report otherwise (and make a later message of the same id in
						// the batch a
						// duplicate); the model has checked both runs.
						return;
					}
					assertThat(second).as(describe("the same send again reports what the first did")).isEqualTo(first);
				}

			};
		}

		private Operation promote() {
			int limit = this.random.nextBoolean() ? 1 + this.random.nextInt(5) : 1000;
			long lookahead = this.random.nextBoolean() ? 0 : 2 * HOUR;
			return new Operation("promote limit " + limit + " lookahead " + lookahead, this.keys.scheduled(),
					this.keys.inFlight()) {

				@Override
				Object run() {
					return Transitions.promote(Run.this.store, Run.this.topic, limit, Duration.ofMillis(lookahead));
				}

				@Override
				void expect(Object reply, long before, long after) {
					PromoteResult result = (PromoteResult) reply;
					assertThat(result.moved()).as(describe("messages promoted"))
						.isEqualTo(Run.this.model.promote(before, limit, lookahead));
					List<Live> scheduled = Run.this.model.scheduled();
					long nextDue = scheduled.isEmpty() ? -1 : (scheduled.get(0).due <= before) ? 0 : 1;
					assertThat(signum(result.nextDueIn())).as(describe("next due")).isEqualTo(nextDue);
					long nextLease = Run.this.model.live.values()
						.stream()
						.filter((message) -> message.state == State.IN_FLIGHT)
						.mapToLong((message) -> (message.deadline <= before) ? 0 : 1)
						.min()
						.orElse(-1);
					assertThat(signum(result.nextLeaseEndIn())).as(describe("next lease end")).isEqualTo(nextLease);
					// ready_waiting: the lists a claim reads (those of priorities 1
					// to 9 only while the topic uses priorities) or the group ready
					// set hold an id.
					boolean waiting = !Run.this.model.ready.isEmpty() || !Run.this.model.groupReady.isEmpty()
							|| (!Run.this.model.priorities.isEmpty()
									&& Run.this.model.readyLists.stream().anyMatch((list) -> !list.isEmpty()));
					if (Run.this.brokenDuringCall != null && (isReadyList(Run.this.brokenDuringCall)
							|| Run.this.brokenDuringCall.equals(Run.this.keys.groupReady()))) {
						// One EXISTS over the lists counts a key of another type too: at
						// worst a claim that finds nothing.
						waiting = waiting || result.readyWaiting();
					}
					assertThat(result.readyWaiting()).as(describe("an id waiting on a ready list")).isEqualTo(waiting);
				}

			};
		}

		private Operation claim(Consumer consumer) {
			String token = consumer.nextToken();
			int limit = (this.random.nextInt(10) == 0) ? 1000 : 1 + this.random.nextInt(4);
			int earlyLimit = this.random.nextInt(4);
			Duration lease = (this.random.nextInt(10) < 7) ? LONG_LEASE : Duration.ZERO;
			int groupConcurrency = (this.limits.nextInt(8) == 0) ? this.limits.nextInt(3) : this.groupLimit;
			// Now and then a group weighs more: it shares turns, never limits or order.
			GroupWeights weights = (this.limits.nextInt(4) == 0)
					? GroupWeights
						.of(Map.of(GROUPS.get(this.limits.nextInt(GROUPS.size())), 2 + this.limits.nextInt(4)))
					: GroupWeights.NONE;
			// Now and then a per-group rate limit: a group not yet on time is paused
			// until it is.
			RateLimit groupRate = (this.limits.nextInt(6) == 0)
					? new RateLimit(1 + this.limits.nextInt(3), Duration.ofMillis(50 + this.limits.nextInt(450)))
					: null;
			String record = this.keys.claimRecord(consumer.id);
			return new Operation(
					"claim " + token + " limit " + limit + " early " + earlyLimit + " lease " + lease.toMillis()
							+ ((groupConcurrency > 0) ? " group concurrency " + groupConcurrency : "")
							+ (weights.isEmpty() ? "" : " weights " + weights)
							+ ((groupRate != null) ? " group rate " + groupRate.limit() + " per "
									+ groupRate.period().toMillis() + " ms" : ""),
					List.of(record), record, this.keys.ready()) {

				/** The groups parked in the rotation (+inf) when the claim was sent. */
				private Set<String> parked = Set.of();

				/** The group pauses when the claim was sent. */
				private Map<String, Double> pauses = Map.of();

				/**
				 * The strict-order waits of the parked groups when the claim was sent.
				 */
				private Map<String, Double> waits = Map.of();

				@Override
				Object run() {
					this.parked = parkedGroups();
					this.pauses = pauses();
					Map<String, Double> waits = new TreeMap<>();
					this.parked.forEach((group) -> {
						Double wait = waitOf(group);
						if (wait != null) {
							waits.put(group, wait);
						}
					});
					this.waits = waits;
					return ScriptCalls.await(Run.this.store.topic(Run.this.topic)
						.claim(consumer.id, token, limit, earlyLimit, lease, null, groupConcurrency, weights, groupRate,
								WriteGate.OPEN));
				}

				@Override
				boolean resendable() {
					// A zero lease ends the claim record with it: a claim sent again
					// after it claims anew.
					return !lease.isZero();
				}

				@Override
				boolean servedByRotation() {
					return Run.this.model.servesRotation(consumer.id, token);
				}

				@Override
				int groupConcurrency() {
					return groupConcurrency;
				}

				@Override
				void expect(Object reply, long before, long after) {
					ClaimResult result = (ClaimResult) reply;
					long deadline = result.messages().isEmpty() ? 0 : result.messages().get(0).leaseDeadlineMillis();
					Map<String, Integer> inFlightBefore = inFlightByGroup();
					ClaimReply expected = Run.this.model.servesRotation(consumer.id, token)
							? expectRotationClaim(result, limit, earlyLimit, consumer.id, token, before, after,
									deadline, groupConcurrency, groupRate != null, this.parked, this.pauses, this.waits,
									inFlightBefore)
							: Run.this.model.claim(before, consumer.id, token, limit, earlyLimit, deadline);
					if (!expected.replayed()) {
						expectWithinGroupConcurrency(groupConcurrency, inFlightBefore, expected.ids());
					}
					assertThat(result.messages()).extracting(ClaimedMessage::id)
						.as(describe("ids claimed"))
						.containsExactlyElementsOf(expected.ids());
					assertThat(result.messages())
						.extracting((message) -> new String(message.stored(), StandardCharsets.UTF_8))
						.as(describe("stored messages claimed, with their attempts"))
						.containsExactlyElementsOf(expected.stored());
					assertThat(result.more()).as(describe("more may be waiting")).isEqualTo(expected.more());
					assertThat(result.messages()).extracting(ClaimedMessage::leaseDeadlineMillis)
						.as(describe("one lease deadline for the claim"))
						.allMatch((each) -> each == deadline);
					if (!result.messages().isEmpty() && !expected.replayed()) {
						assertThat(deadline).as(describe("lease deadline from Redis time"))
							.isBetween(before + lease.toMillis(), after + lease.toMillis());
					}
					for (String id : expected.ids()) {
						Live message = Run.this.model.live.get(id);
						assertThat(message.due - message.lookahead)
							.as(describe(id + " claimed no earlier than its due time minus its lookahead"))
							.isLessThanOrEqualTo(after);
						consumer.held.put(id, token);
					}
					if (Run.this.revived != null && expected.ids().contains(Run.this.revived)) {
						Run.this.followup = Followup.SETTLE;
					}
					if (!expected.replayed()) {
						// A claim that leased nothing deletes the record; one with a zero
						// lease leaves a record that expires at once.
						consumer.lastClaim = (!expected.ids().isEmpty() && !lease.isZero()) ? token : null;
					}
					count("claimed", expected.ids().size());
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					ClaimResult firstResult = (ClaimResult) first;
					if (firstResult.messages().isEmpty() && firstResult.more()) {
						// The first leased nothing (no record to answer from) but made
						// something claimable, a group whose pause had ended: the second
						// is a claim of its own, checked as one.
						count("claims sent again after one that only ended a pause");
						return;
					}
					assertThat(((ClaimResult) second).messages()).extracting(ClaimedMessage::id)
						.as(describe("the same claim again returns what the first leased"))
						.containsExactlyElementsOf(
								((ClaimResult) first).messages().stream().map(ClaimedMessage::id).toList());
				}

			};
		}

		/**
		 * Checks a claim that the rotation of the groups served (the topic uses groups
		 * and a group has ready messages), whose choice between the groups the model does
		 * not predict, and applies it to the model. Checked: every id leased was ready
		 * (never in flight, never twice), a message of a group was due, one of no group
		 * due or made ready early by the lookahead (at most the early limit of those); as
		 * many due messages as wanted or as there are to take (when fewer than 1000 ids
		 * and members wait, so that the look limit cannot stop the claim); within each
		 * group, the messages leased are its most urgent ready ones, then the first due,
		 * in that order; what the claim removed from the group ready set and the ready
		 * lists was leased or stale, and nothing was added. The model then takes the
		 * ready lists and the group ready set from Redis.
		 * @return the reply the model now expects: the claim's
		 */
		private ClaimReply expectRotationClaim(ClaimResult result, int limit, int earlyLimit, String consumer,
				String token, long before, long after, long deadline, int groupConcurrency, boolean paced,
				Set<String> parked, Map<String, Double> pauses, Map<String, Double> waits,
				Map<String, Integer> inFlightBefore) {
			QueueModel model = this.model;
			count("claims served by the rotation");
			List<String> ids = result.messages().stream().map(ClaimedMessage::id).toList();
			assertThat(ids).as(describe("rotation claim: no id twice")).doesNotHaveDuplicates();
			int due = 0;
			int early = 0;
			Map<String, List<String>> claimedByGroup = new TreeMap<>();
			for (String id : ids) {
				Live message = model.live.get(id);
				assertThat(message).as(describe("rotation claim: " + id + " is stored")).isNotNull();
				assertThat(message.state).as(describe("rotation claim: " + id + " was ready")).isEqualTo(State.READY);
				String group = model.groups.get(id);
				if (group != null) {
					assertThat(message.due).as(describe("rotation claim: " + id + " of group " + group + " was due"))
						.isLessThanOrEqualTo(before);
					assertThat(pauses.getOrDefault(group, 0.0))
						.as(describe("rotation claim: " + id + " of group " + group + " is not paused"))
						.isLessThanOrEqualTo((double) after);
					claimedByGroup.computeIfAbsent(group, (any) -> new ArrayList<>()).add(model.memberOf(id));
				}
				if (message.due <= before) {
					due++;
				}
				else {
					early++;
				}
			}
			count("claimed from a group", claimedByGroup.values().stream().mapToInt(List::size).sum());
			if (claimedByGroup.size()
					+ ((claimedByGroup.values().stream().mapToInt(List::size).sum() < ids.size()) ? 1 : 0) > 1) {
				count("rotation claims that served two groups or more");
			}
			assertThat(early).as(describe("rotation claim: at most the early limit taken early"))
				.isLessThanOrEqualTo(earlyLimit);
			// Due messages that the claim can take: ready ones of no group (each has
			// its id in the list of its priority) and those of a group whose member
			// is in place, as many as the group has free slots under the group
			// concurrency; none of a group parked at its limit (+inf in the rotation),
			// which waits for a slot of it to be freed, whatever this claim's limit.
			long claimable = model.live.values()
				.stream()
				.filter((message) -> message.state == State.READY && message.due <= before
						&& !model.groups.containsKey(message.id))
				.count();
			Map<String, Integer> readyInGroup = new TreeMap<>();
			model.live.values()
				.stream()
				.filter((message) -> message.state == State.READY && message.due <= before
						&& model.groups.containsKey(message.id)
						&& model.groupReady.contains(model.memberOf(message.id)))
				.forEach((message) -> readyInGroup.merge(model.groups.get(message.id), 1, Integer::sum));
			// A pause that ended while the claim ran may have held its group back or not.
			boolean pauseEndedDuringClaim = false;
			for (Map.Entry<String, Integer> entry : readyInGroup.entrySet()) {
				String group = entry.getKey();
				double pausedUntil = pauses.getOrDefault(group, 0.0);
				if (pausedUntil > before && pausedUntil <= after && !parked.contains(group)) {
					pauseEndedDuringClaim = true;
				}
				if (pausedUntil > after && !parked.contains(group)) {
					count("rotation claims that passed over a paused group");
				}
				int room = (parked.contains(group) || pausedUntil > after) ? 0 : (groupConcurrency == 0)
						? Integer.MAX_VALUE : Math.max(0, groupConcurrency - inFlightBefore.getOrDefault(group, 0));
				if (room < entry.getValue()) {
					count(parked.contains(group) ? "rotation claims that passed over a parked group"
							: "rotation claims held back by a group's free slots");
				}
				claimable += Math.min(entry.getValue(), room);
			}
			int waiting = model.groupReady.size() + model.readyLists.stream().mapToInt(List::size).sum();
			// A per-group rate limit holds a group to its pace (at most one a claim):
			// fewer.
			// So may a member left in a group by a message sent again without one and
			// ready
			// in a list: the claim takes it in the group's turn (as a message whose
			// groups
			// hash entry was lost), which ends the turn at the group's concurrency limit
			// though it takes no slot (seed 6265895904763).
			boolean ungroupedMember = model.groupReady.stream().anyMatch((member) -> {
				Live message = model.live.get(QueueModel.idOfMember(member));
				return message != null && message.state == State.READY && !model.groups.containsKey(message.id);
			});
			if (ungroupedMember) {
				count("rotation claims beside a member of a message now of no group");
			}
			if (waiting < QueueModel.CLAIM_LOOK_LIMIT && !pauseEndedDuringClaim && !paced
					&& !(ungroupedMember && groupConcurrency > 0)) {
				assertThat(due).as(describe("rotation claim: due messages taken: as many as wanted or waiting"))
					.isEqualTo((int) Math.min(limit, claimable));
			}
			else {
				assertThat(due).as(describe("rotation claim: at most as many due as wanted"))
					.isLessThanOrEqualTo(limit);
			}
			// Within a group, most urgent first, then due first: the group's first valid
			// members, in order.
			claimedByGroup.forEach((group, members) -> {
				List<String> valid = model.groupReady.stream()
					.filter((member) -> QueueModel.groupOfMember(member).equals(group) && model.validMember(member))
					.toList();
				assertThat(members).as(describe("rotation claim: group " + group + " serves its most urgent first"))
					.containsExactlyElementsOf(valid.subList(0, Math.min(valid.size(), members.size())));
			});
			// The group ready set: only members looked at leave it, each leased or stale.
			Set<String> groupReady = new TreeSet<>(this.redis.opsForZSet().range(this.keys.groupReady(), 0, -1));
			assertThat(model.groupReady).as(describe("rotation claim: adds no member")).containsAll(groupReady);
			for (String member : model.groupReady) {
				String id = QueueModel.idOfMember(member);
				boolean leased = ids.contains(id) && model.groups.containsKey(id) && model.memberOf(id).equals(member);
				if (leased) {
					assertThat(groupReady).as(describe("rotation claim: the member of " + id + " leased leaves"))
						.doesNotContain(member);
				}
				else if (!groupReady.contains(member)) {
					count("stale group members dropped");
					assertThat(model.validMember(member))
						.as(describe("rotation claim: member " + member.replace('\0', '|') + " dropped but stale"))
						.isFalse();
				}
			}
			// The ready lists: ids leave from the head, leased or stale (an early
			// one kept goes back to the head), none added.
			for (int priority = 0; priority <= Script.MAX_PRIORITY; priority++) {
				List<String> old = model.readyLists.get(priority);
				List<String> now = this.redis.opsForList().range(this.keys.ready(priority), 0, -1);
				Map<String, Integer> left = new HashMap<>();
				old.forEach((id) -> left.merge(id, 1, Integer::sum));
				now.forEach((id) -> left.merge(id, -1, Integer::sum));
				int listed = priority;
				left.forEach((id, removed) -> {
					assertThat(removed).as(describe("rotation claim: adds no id to ready list " + listed))
						.isGreaterThanOrEqualTo(0);
					Live message = model.live.get(id);
					boolean own = message != null && message.state == State.READY && !model.groups.containsKey(id)
							&& model.readyListOf(id) == old;
					if (removed > 0 && own && !now.contains(id)) {
						assertThat(ids).as(describe("rotation claim: ready " + id + " left list " + listed + " leased"))
							.contains(id);
					}
				});
				old.clear();
				old.addAll(now);
			}
			model.groupReady.clear();
			model.groupReady.addAll(groupReady);
			List<String> stored = model.claimedByRotation(consumer, token, ids, deadline);
			// A claim that finds a pause ended while its group is parked puts the group
			// back and says more may be waiting (the next claim serves it).
			boolean pauseEnded = pauses.entrySet()
				.stream()
				.anyMatch((pause) -> pause.getValue() <= before && parked.contains(pause.getKey()));
			boolean pauseMayHaveEnded = pauses.entrySet()
				.stream()
				.anyMatch((pause) -> pause.getValue() <= after && parked.contains(pause.getKey()));
			if (pauseEnded) {
				count("rotation claims that ended a pause");
			}
			// A claim without a group concurrency that finds no pause puts back the
			// groups
			// parked (for a pause lost, or at a limit of other claims) and says more may
			// be
			// waiting.
			// A group whose strict-order wait has not ended stays parked (its pause
			// given back).
			boolean parkedPutBack = groupConcurrency == 0 && pauses.isEmpty()
					&& parked.stream().anyMatch((group) -> waits.getOrDefault(group, 0.0) <= before);
			boolean parkedMayBePutBack = groupConcurrency == 0 && pauses.isEmpty()
					&& parked.stream().anyMatch((group) -> waits.getOrDefault(group, 0.0) <= after);
			if (parkedPutBack) {
				count("rotation claims that put back groups parked with no pause");
			}
			if (groupConcurrency == 0 && pauses.isEmpty()
					&& parked.stream().anyMatch((group) -> waits.getOrDefault(group, 0.0) > after)) {
				count("rotation claims that gave a waiting group its lost pause back");
			}
			boolean more = (waiting >= QueueModel.CLAIM_LOOK_LIMIT && result.more()) || pauseEnded
					|| (pauseMayHaveEnded && result.more()) || parkedPutBack || (parkedMayBePutBack && result.more());
			return new ClaimReply(ids, stored, more, false);
		}

		/**
		 * The groups parked in the rotation at their limit (scored +inf), read before a
		 * claim; none while the rotation's key is of another type (the claim then fails).
		 */
		private Set<String> parkedGroups() {
			if (this.redis.type(this.keys.groupRotation()) != DataType.ZSET) {
				return Set.of();
			}
			return this.redis.opsForZSet()
				.rangeWithScores(this.keys.groupRotation(), 0, -1)
				.stream()
				.filter((tuple) -> tuple.getScore() != null && tuple.getScore().isInfinite())
				.map(TypedTuple::getValue)
				.collect(Collectors.toCollection(TreeSet::new));
		}

		/**
		 * @return each group's messages in flight, as the model holds them
		 */
		private Map<String, Integer> inFlightByGroup() {
			Map<String, Integer> inFlight = new TreeMap<>();
			this.model.live.values()
				.stream()
				.filter((message) -> message.state == State.IN_FLIGHT && this.model.groups.containsKey(message.id))
				.forEach((message) -> inFlight.merge(this.model.groups.get(message.id), 1, Integer::sum));
			return inFlight;
		}

		/**
		 * A claim with a group concurrency leaves no group with more messages in flight
		 * than it: one that had as many or more before took none.
		 * @param groupConcurrency the claim's group concurrency, 0 for none
		 * @param inFlightBefore each group's messages in flight before the claim
		 * @param ids the ids it leased
		 */
		private void expectWithinGroupConcurrency(int groupConcurrency, Map<String, Integer> inFlightBefore,
				List<String> ids) {
			if (groupConcurrency == 0) {
				return;
			}
			count("claims with a group concurrency of " + groupConcurrency);
			Map<String, Integer> took = new TreeMap<>();
			for (String id : ids) {
				String group = this.model.groups.get(id);
				if (group != null) {
					took.merge(group, 1, Integer::sum);
				}
			}
			took.forEach((group, taken) -> {
				int had = inFlightBefore.getOrDefault(group, 0);
				assertThat(had + taken)
					.as(describe("a claim with group concurrency " + groupConcurrency + " took " + taken + " of group "
							+ group + ", which had " + had + " in flight"))
					.isLessThanOrEqualTo(groupConcurrency);
				if (had + taken == groupConcurrency) {
					count("claims that filled a group's slots");
				}
			});
		}

		private Operation ack(Consumer consumer) {
			int size = 1 + this.random.nextInt(3);
			List<String> ids = new ArrayList<>();
			List<String> tokens = new ArrayList<>();
			for (int i = 0; i < size; i++) {
				String[] lease = pickLease(consumer);
				ids.add(lease[0]);
				tokens.add(lease[1]);
			}
			return ack(consumer, ids, tokens);
		}

		private Operation ack(Consumer consumer, List<String> ids, List<String> tokens) {
			return new Operation("ack " + ids + " " + tokens, this.keys.leases()) {

				@Override
				Object run() {
					return Transitions.ack(Run.this.store, Run.this.topic, ids, tokens);
				}

				@Override
				void expect(Object reply, long before, long after) {
					List<Boolean> expected = new ArrayList<>();
					for (int i = 0; i < ids.size(); i++) {
						Live message = Run.this.model.live.get(ids.get(i));
						expected.add(message != null && tokens.get(i).equals(message.token));
					}
					assertThat(reply).as(describe("acks: a token acks only the message leased to it"))
						.isEqualTo(expected);
					assertThat(reply).isEqualTo(Run.this.model.ack(ids, tokens, before));
					for (int i = 0; i < ids.size(); i++) {
						consumer.done(ids.get(i), tokens.get(i));
						if (expected.get(i) && ids.get(i).equals(Run.this.revived)) {
							Run.this.followup = Followup.REPLAY;
						}
					}
				}

				@Override
				@SuppressWarnings("unchecked")
				void expectSentAgain(Object first, Object second) {
					assertThat((List<Boolean>) second).as(describe("the same ack again finds no lease"))
						.containsOnly(false);
				}

			};
		}

		private Operation retry(Consumer consumer) {
			String[] lease = pickLease(consumer);
			long backoff = this.random.nextBoolean() ? 0 : HOUR;
			String error = switch (this.random.nextInt(4)) {
				case 0 -> null;
				case 1 -> "";
				case 2 -> "java.lang.IllegalStateException: failed é " + this.random.nextInt(100);
				default -> "error:with:colons " + "x".repeat(this.random.nextInt(300));
			};
			// Now and then a slow-down of a message of a group (postponed, its group
			// paused until then), and now and then in strict group order (the message
			// waits in its group, which waits with it).
			boolean slowDown = this.step >= this.groupsAt && this.limits.nextInt(6) == 0;
			boolean strict = this.step >= this.groupsAt && this.limits.nextInt(5) == 0;
			GroupWait wait = strict ? GroupWait.IN_GROUP : slowDown ? GroupWait.GROUP : GroupWait.NONE;
			return new Operation((slowDown ? "slow down " : "retry ") + lease[0] + " " + lease[1] + " backoff "
					+ backoff + (slowDown ? "" : " error " + error) + " group wait " + wait, this.keys.leases()) {

				/** The message's group and its pause's end, read before the call. */
				private @Nullable String group;

				private @Nullable Double pausedUntil;

				/**
				 * Whether its stored header is readable: else it is scheduled, whatever.
				 */
				private boolean readable;

				@Override
				Object run() {
					this.group = Run.this.model.groups.get(lease[0]);
					this.pausedUntil = (this.group != null) ? pauseOf(this.group) : null;
					String stored = Run.this.redis.<String, String>opsForHash().get(Run.this.keys.messages(), lease[0]);
					this.readable = stored != null && stored.matches("(?s)-?\\d+:-?\\d+:.*");
					TopicStore partition = Run.this.store.topic(Run.this.topic);
					return slowDown ? partition.postpone(lease[0], lease[1], Duration.ofMillis(backoff), wait)
							: partition.retry(lease[0], lease[1], Duration.ofMillis(backoff), error, wait);
				}

				@Override
				void expect(Object reply, long before, long after) {
					long due = (Long) reply;
					assertThat(due != -1).as(describe("retry holds the lease"))
						.isEqualTo(Run.this.model.holdsLease(lease[0], lease[1]));
					if (due != -1) {
						assertThat(due).as(describe("retry due time")).isBetween(before + backoff, after + backoff);
						if (this.group != null && wait == GroupWait.IN_GROUP && this.readable) {
							count("retries that waited in their group");
							Run.this.model.retryInGroup(lease[0], lease[1], slowDown ? 0 : 1, error, backoff > 0);
						}
						else if (slowDown) {
							Run.this.model.postpone(lease[0], lease[1], due);
						}
						else {
							Run.this.model.retry(lease[0], lease[1], due, error);
						}
						if (this.group != null && wait != GroupWait.NONE) {
							count("retries that paused their group");
							double ends = Math.max((this.pausedUntil != null) ? this.pausedUntil : 0, due);
							assertThat(pauseOf(this.group))
								.as(describe("the group waits until the message's next attempt, or later"))
								.isEqualTo(ends);
						}
					}
					consumer.done(lease[0], lease[1]);
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same retry again finds no lease")).isEqualTo(-1L);
				}

			};
		}

		private Operation deadLetter(Consumer consumer) {
			return deadLetter(consumer, pickLease(consumer));
		}

		private Operation deadLetter(Consumer consumer, String[] lease) {
			String error = "error " + this.step;
			return new Operation("dead-letter " + lease[0] + " " + lease[1], this.keys.leases()) {

				@Override
				Object run() {
					return Transitions.deadLetter(Run.this.store, Run.this.topic, lease[0], lease[1], error);
				}

				@Override
				void expect(Object reply, long before, long after) {
					assertThat(reply).as(describe("dead-letter holds the lease"))
						.isEqualTo(Run.this.model.deadLetter(lease[0], lease[1], error));
					if ((Boolean) reply) {
						observeDeath(lease[0], before, after);
						died(lease[0]);
					}
					consumer.done(lease[0], lease[1]);
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same dead-letter again finds no lease")).isEqualTo(false);
				}

			};
		}

		private Operation release(Consumer consumer) {
			List<String[]> leases = pickLeases(consumer);
			List<String> ids = leases.stream().map((lease) -> lease[0]).toList();
			List<String> tokens = leases.stream().map((lease) -> lease[1]).toList();
			return new Operation("release " + ids + " " + tokens, this.keys.leases()) {

				@Override
				Object run() {
					return Transitions.release(Run.this.store, Run.this.topic, ids, tokens);
				}

				@Override
				void expect(Object reply, long before, long after) {
					assertThat(reply).as(describe("releases: a token releases only the message leased to it, once"))
						.isEqualTo(Run.this.model.release(ids, tokens));
					for (int i = 0; i < ids.size(); i++) {
						consumer.done(ids.get(i), tokens.get(i));
					}
					count("released", (int) ((List<?>) reply).stream().filter(Boolean.TRUE::equals).count());
				}

				@Override
				@SuppressWarnings("unchecked")
				void expectSentAgain(Object first, Object second) {
					assertThat((List<Boolean>) second).as(describe("the same release again finds no lease"))
						.containsOnly(false);
				}

			};
		}

		/**
		 * A hand-back of a claim: mostly the consumer's last claim that leased messages
		 * (while its record lives: its lease was long), else one of its older claims or
		 * another consumer's, whose record it no longer is.
		 */
		private Operation releaseClaim(Consumer consumer) {
			String token = (consumer.lastClaim != null && this.random.nextInt(10) < 7) ? consumer.lastClaim
					: this.consumers.get(this.random.nextInt(this.consumers.size())).id + ".0";
			String record = this.keys.claimRecord(consumer.id);
			return new Operation("release claim " + token + " of " + consumer.id, List.of(record), record) {

				@Override
				Object run() {
					return Transitions.releaseClaim(Run.this.store, Run.this.topic, consumer.id, token, LONG_LEASE);
				}

				@Override
				void expect(Object reply, long before, long after) {
					assertThat(reply).as(describe("a claim hands back what it leased and still holds, in order"))
						.isEqualTo(Run.this.model.releaseClaim(consumer.id, token));
					for (Object id : (List<?>) reply) {
						consumer.done((String) id, token);
					}
					count("claims released");
					count("released by claim", ((List<?>) reply).size());
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat((List<?>) second).as(describe("the same claim released again finds no lease")).isEmpty();
				}

			};
		}

		private Operation extendLeases(Consumer consumer) {
			List<String[]> leases = pickLeases(consumer);
			List<String> ids = leases.stream().map((lease) -> lease[0]).toList();
			List<String> tokens = leases.stream().map((lease) -> lease[1]).toList();
			long length = this.random.nextBoolean() ? 0 : HOUR;
			return new Operation("extend " + ids + " " + tokens + " by " + length, this.keys.leases(),
					this.keys.inFlight()) {

				@Override
				Object run() {
					return Transitions.extendLeases(Run.this.store, Run.this.topic, ids, tokens,
							Duration.ofMillis(length));
				}

				@Override
				@SuppressWarnings("unchecked")
				void expect(Object reply, long before, long after) {
					List<Long> deadlines = (List<Long>) reply;
					for (int i = 0; i < ids.size(); i++) {
						long deadline = deadlines.get(i);
						boolean holds = Run.this.model.holdsLease(ids.get(i), tokens.get(i));
						assertThat(deadline != -1).as(describe("extension of " + ids.get(i) + " holds the lease"))
							.isEqualTo(holds);
						if (holds) {
							long old = Run.this.model.deadline(ids.get(i));
							assertThat(deadline)
								.as(describe("extended deadline of " + ids.get(i)
										+ ": the later of the old one and now + length"))
								.isBetween(Math.max(old, before + length), Math.max(old, after + length));
						}
					}
					List<Boolean> extended = deadlines.stream().map((deadline) -> deadline != -1).toList();
					assertThat(Run.this.model.extendLeases(ids, tokens, deadlines)).isEqualTo(extended);
					count("extended", (int) extended.stream().filter(Boolean::booleanValue).count());
				}

				@Override
				@SuppressWarnings("unchecked")
				void expectSentAgain(Object first, Object second) {
					List<Long> firstDeadlines = (List<Long>) first;
					List<Long> secondDeadlines = (List<Long>) second;
					for (int i = 0; i < ids.size(); i++) {
						if (firstDeadlines.get(i) == -1) {
							assertThat(secondDeadlines.get(i)).as(describe("a lost lease stays lost")).isEqualTo(-1);
						}
						else {
							assertThat(secondDeadlines.get(i)).as(describe("the same extension again keeps the lease"))
								.isGreaterThanOrEqualTo(firstDeadlines.get(i));
						}
					}
				}

			};
		}

		private Operation expireLeases() {
			int limit = this.random.nextBoolean() ? 1 + this.random.nextInt(3) : 1000;
			int maxAttempts = 1 + this.random.nextInt(4);
			return new Operation("expire leases limit " + limit + " max attempts " + maxAttempts,
					this.keys.inFlight()) {

				@Override
				Object run() {
					return Transitions.expireLeases(Run.this.store, Run.this.topic, limit, maxAttempts);
				}

				@Override
				void expect(Object reply, long before, long after) {
					LeaseExpiryResult result = (LeaseExpiryResult) reply;
					ExpiryReply expected = Run.this.model.expireLeases(before, limit, maxAttempts);
					assertThat(result.requeued()).as(describe("leases expired and made ready again"))
						.containsExactlyElementsOf(expected.requeued());
					assertThat(result.deadLettered()).as(describe("leases expired on the last attempt"))
						.containsExactlyElementsOf(expected.deadLettered());
					expected.deadLettered().forEach((id) -> observeDeath(id, before, after));
					expected.deadLettered().forEach(Run.this::died);
					boolean inFlight = Run.this.model.count(State.IN_FLIGHT) > 0;
					assertThat(result.nextExpiryIn() != null).as(describe("a lease is left")).isEqualTo(inFlight);
					count("expired", result.expired());
				}

			};
		}

		private Operation cancel() {
			List<String> readyToSendAgain = this.model.live.values()
				.stream()
				.filter((message) -> message.state == State.READY
						&& (this.model.priorities.containsKey(message.id) || this.model.groups.containsKey(message.id)))
				.map((message) -> message.id)
				.toList();
			String id = (!readyToSendAgain.isEmpty() && this.random.nextInt(10) < 7)
					? readyToSendAgain.get(this.random.nextInt(readyToSendAgain.size())) : pickId();
			// One request, however often it is sent (as the store sends it again after a
			// dropped reply): its token, run by the script itself.
			String token = "cancel-" + this.step;
			return new Operation("cancel " + id, this.keys.messages(), this.keys.scheduled(), this.keys.inFlight(),
					this.keys.cancels(), this.keys.groups()) {

				private @Nullable Object first;

				@Override
				Object run() {
					List<String> keys = List.of(Run.this.keys.messages(), Run.this.keys.scheduled(),
							Run.this.keys.inFlight(), Run.this.keys.priorities(), Run.this.keys.partitionCount(),
							Run.this.keys.cancels(), Run.this.keys.groups(), Run.this.keys.groupWaits());
					return Long.valueOf(1).equals(Run.this.redis.execute(CANCEL, keys, id, "1", token));
				}

				@Override
				void expect(Object reply, long before, long after) {
					Live message = Run.this.model.live.get(id);
					Integer priority = Run.this.model.priorities.get(id);
					String group = Run.this.model.groups.get(id);
					if (message != null && message.state == State.READY && group != null) {
						Run.this.cancelledInGroup.put(id,
								new long[] { message.due, (priority != null) ? priority : 0, GROUPS.indexOf(group) });
						Run.this.followup = Followup.SEND;
						count("cancelled while ready in a group");
					}
					else if (message != null && message.state == State.READY && priority != null) {
						Run.this.cancelledWithPriority.put(id, priority);
						Run.this.followup = Followup.SEND;
						count("cancelled while ready with a priority");
					}
					boolean modeled = Run.this.model.cancel(id);
					if (Boolean.TRUE.equals(this.first)) {
						assertThat(reply).as(describe("the same cancel again reports it cancelled")).isEqualTo(true);
						count("cancel sent again after it cancelled");
					}
					else {
						assertThat(reply).as(describe("cancel")).isEqualTo(modeled);
					}
					if (this.first == null) {
						this.first = reply;
					}
					Set<TypedTuple<String>> tokens = Run.this.redis.opsForZSet()
						.rangeWithScores(Run.this.keys.cancels(), 0, -1);
					assertThat(tokens).as(describe("cancel tokens forgettable a minute after their cancel"))
						.allSatisfy((kept) -> assertThat(kept.getScore()).isLessThanOrEqualTo(after + 60_000.0));
					if (!tokens.isEmpty()) {
						assertThat(Run.this.redis.getExpire(Run.this.keys.cancels()))
							.as(describe("the cancels key expires within a minute"))
							.isBetween(1L, 60L);
					}
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same cancel again reports what it did")).isEqualTo(first);
				}

			};
		}

		private Operation reschedule() {
			String id = pickId();
			long delay = List.of(0L, HOUR, 5 * HOUR).get(this.random.nextInt(3));
			return new Operation("reschedule " + id + " by " + delay, this.keys.messages(), this.keys.scheduled(),
					this.keys.inFlight()) {

				@Override
				Object run() {
					return Run.this.store.reschedule(Run.this.topic, id, Duration.ofMillis(delay));
				}

				@Override
				void expect(Object reply, long before, long after) {
					long due = (Long) reply;
					assertThat(due != -1).as(describe("reschedule finds a pending message"))
						.isEqualTo(Run.this.model.pending(id));
					if (due != -1) {
						assertThat(due).as(describe("new due time")).isBetween(before + delay, after + delay);
						Run.this.model.reschedule(id, due);
					}
				}

			};
		}

		private Operation replay(List<String> ids) {
			return new Operation("replay " + ids, this.keys.deadMessages(), this.keys.messages(), this.keys.dead(),
					this.keys.deadErrors(), this.keys.scheduled(), this.keys.deadPriorities()) {

				@Override
				Object run() {
					return Run.this.store.replayDead(Run.this.topic, ids);
				}

				@Override
				void expect(Object reply, long before, long after) {
					ReplayResult result = (ReplayResult) reply;
					long now = -1;
					if (!result.replayed().isEmpty()) {
						now = Run.this.redis.opsForZSet()
							.score(Run.this.keys.scheduled(), result.replayed().get(0))
							.longValue();
						assertThat(now).as(describe("replayed due at once")).isBetween(before, after);
					}
					ReplayReply expected = Run.this.model.replay(ids, now);
					assertThat(result.replayed()).as(describe("ids replayed"))
						.containsExactlyElementsOf(expected.replayed());
					assertThat(result.skipped()).as(describe("ids left dead")).isEqualTo(expected.skipped());
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(((ReplayResult) second).replayed()).as(describe("the same replay again replays nothing"))
						.isEmpty();
				}

			};
		}

		private Operation purge() {
			List<String> ids = pickDeadIds();
			return new Operation("purge " + ids, this.keys.dead(), this.keys.deadMessages(), this.keys.deadErrors(),
					this.keys.deadPriorities()) {

				@Override
				Object run() {
					return Run.this.store.purgeDead(Run.this.topic, ids);
				}

				@Override
				void expect(Object reply, long before, long after) {
					assertThat(reply).as(describe("dead letters purged")).isEqualTo(Run.this.model.purgeDead(ids));
				}

				@Override
				void expectSentAgain(Object first, Object second) {
					assertThat(second).as(describe("the same purge again finds nothing")).isEqualTo(0L);
				}

			};
		}

		/**
		 * A lease to act on: mostly one the consumer holds; sometimes another consumer's
		 * id with this consumer's token, or its own id with another's token.
		 */
		private String[] pickLease(Consumer consumer) {
			int kind = this.random.nextInt(10);
			List<Map.Entry<String, String>> own = new ArrayList<>(consumer.held.entrySet());
			List<Map.Entry<String, String>> others = this.consumers.stream()
				.filter((other) -> other != consumer)
				.flatMap((other) -> other.held.entrySet().stream())
				.toList();
			if (kind < 7 && !own.isEmpty()) {
				Map.Entry<String, String> lease = own.get(this.random.nextInt(own.size()));
				return new String[] { lease.getKey(), lease.getValue() };
			}
			if (kind < 9 && !others.isEmpty()) {
				Map.Entry<String, String> lease = others.get(this.random.nextInt(others.size()));
				String token = own.isEmpty() ? consumer.id + ".0" : own.get(0).getValue();
				return new String[] { lease.getKey(), token };
			}
			if (!own.isEmpty() && !others.isEmpty()) {
				return new String[] { own.get(0).getKey(), others.get(this.random.nextInt(others.size())).getValue() };
			}
			return new String[] { pickId(), consumer.id + ".0" };
		}

		/**
		 * One to four leases to act on in one call, each as {@link #pickLease(Consumer)}
		 * picks it, valid and stale mixed; sometimes the same id twice.
		 */
		private List<String[]> pickLeases(Consumer consumer) {
			List<String[]> leases = new ArrayList<>();
			int size = 1 + this.random.nextInt(4);
			for (int i = 0; i < size; i++) {
				if (!leases.isEmpty() && this.random.nextInt(8) == 0) {
					String[] again = leases.get(this.random.nextInt(leases.size()));
					leases.add(new String[] { again[0], (this.random.nextBoolean() ? again[1] : consumer.id + ".0") });
				}
				else {
					leases.add(pickLease(consumer));
				}
			}
			return leases;
		}

		private String pickId() {
			List<String> live = new ArrayList<>(this.model.live.keySet());
			if (!live.isEmpty() && this.random.nextInt(10) < 8) {
				return live.get(this.random.nextInt(live.size()));
			}
			return this.usedIds.isEmpty() ? "m0" : this.usedIds.get(this.random.nextInt(this.usedIds.size()));
		}

		private List<String> pickDeadIds() {
			List<String> dead = new ArrayList<>(this.model.dead.keySet());
			List<String> ids = new ArrayList<>();
			int size = 1 + this.random.nextInt(3);
			for (int i = 0; i < size; i++) {
				if (!ids.isEmpty() && this.random.nextInt(8) == 0) {
					ids.add(ids.get(0));
				}
				else if (!dead.isEmpty() && this.random.nextInt(10) < 8) {
					ids.add(dead.get(this.random.nextInt(dead.size())));
				}
				else {
					ids.add(pickId());
				}
			}
			return ids;
		}

		/**
		 * The new message of the {@link #revived} id, in flight, acknowledged or
		 * dead-lettered by the consumer that holds it.
		 * @return the call, or {@code null} if no consumer holds it
		 */
		private @Nullable Operation settleRevived() {
			Live message = (this.revived != null) ? this.model.live.get(this.revived) : null;
			if (message == null || message.state != State.IN_FLIGHT) {
				return null;
			}
			for (Consumer consumer : this.consumers) {
				if (message.token.equals(consumer.held.get(message.id))) {
					return this.random.nextBoolean() ? ack(consumer, List.of(message.id), List.of(message.token))
							: deadLetter(consumer, new String[] { message.id, message.token });
				}
			}
			return null;
		}

		/**
		 * A replay of the dead letters of the {@link #revived} id, buried ones included,
		 * once its new message was settled.
		 * @return the call, or {@code null} if it has none
		 */
		private @Nullable Operation replayRevived() {
			String id = this.revived;
			List<String> names = this.model.dead.keySet()
				.stream()
				.filter((name) -> name.equals(id) || name.startsWith(id + "~"))
				.toList();
			if (id == null || names.isEmpty()) {
				return null;
			}
			this.revived = null;
			count("replayed a dead letter with a priority after a new message of its id");
			return replay(names);
		}

		/**
		 * After a message died: the new message of the {@link #revived} id was settled
		 * (replay its dead letters next), or a message with a priority died (send its id
		 * again next).
		 */
		private void died(String id) {
			if (id.equals(this.revived)) {
				this.followup = Followup.REPLAY;
			}
			else if (this.model.deadPriorities.containsKey(id)) {
				this.revived = id;
				this.followup = Followup.REVIVE;
			}
		}

		/** The time a message died is set by the Redis clock: read it into the model. */
		private void observeDeath(String id, long before, long after) {
			Double died = this.redis.opsForZSet().score(this.keys.dead(), id);
			assertThat(died).as(describe(id + " is dead")).isNotNull();
			assertThat(died.longValue()).as(describe("time of death of " + id)).isBetween(before, after);
			this.model.dead.put(id, this.model.dead.get(id).withDiedAt(died.longValue()));
		}

		// --- Checks
		// -----------------------------------------------------------------------------

		private void check() {
			Map<String, String> messages = hash(this.keys.messages());
			Map<String, Long> scheduled = zset(this.keys.scheduled());
			List<String> ready = this.redis.opsForList().range(this.keys.ready(), 0, -1);
			List<List<String>> readyLists = new ArrayList<>();
			for (int priority = 0; priority <= Script.MAX_PRIORITY; priority++) {
				readyLists.add(this.redis.opsForList().range(this.keys.ready(priority), 0, -1));
			}
			Map<String, String> priorities = hash(this.keys.priorities());
			Map<String, Long> inFlight = zset(this.keys.inFlight());
			Map<String, String> leases = hash(this.keys.leases());
			Map<String, Long> dead = zset(this.keys.dead());
			Map<String, String> deadMessages = hash(this.keys.deadMessages());
			Map<String, String> deadErrors = hash(this.keys.deadErrors());
			Map<String, String> deadPriorities = hash(this.keys.deadPriorities());

			// Each stored message in exactly one state, whatever the model says.
			assertThat(messages.keySet()).as(describe("scheduled ids are stored")).containsAll(scheduled.keySet());
			assertThat(messages.keySet()).as(describe("in-flight ids are stored")).containsAll(inFlight.keySet());
			assertThat(scheduled.keySet()).as(describe("no id both scheduled and in flight"))
				.noneMatch(inFlight::containsKey);
			assertThat(leases.keySet()).as(describe("a lease token for each in-flight id"))
				.isEqualTo(inFlight.keySet());
			// A ready message of a group has its member in the group ready set
			// instead: see checkGroups.
			Map<String, String> groups = hash(this.keys.groups());
			for (String id : messages.keySet()) {
				if (!scheduled.containsKey(id) && !inFlight.containsKey(id) && !groups.containsKey(id)) {
					assertThat(readyLists).as(describe("ready id " + id + " is in a ready list"))
						.anyMatch((list) -> list.contains(id));
				}
			}
			assertThat(deadMessages.keySet()).as(describe("dead messages indexed")).isEqualTo(dead.keySet());
			assertThat(deadErrors.keySet()).as(describe("dead errors indexed")).isEqualTo(dead.keySet());
			// A priority belongs to a stored message or to a dead letter, never to both.
			assertThat(messages.keySet()).as(describe("priorities only of stored messages"))
				.containsAll(priorities.keySet());
			assertThat(deadMessages.keySet()).as(describe("dead priorities only of dead letters"))
				.containsAll(deadPriorities.keySet());

			// Every key as the model says.
			Map<String, String> expectedMessages = new TreeMap<>();
			Map<String, Long> expectedScheduled = new TreeMap<>();
			Map<String, Long> expectedInFlight = new TreeMap<>();
			Map<String, String> expectedLeases = new TreeMap<>();
			for (Live message : this.model.live.values()) {
				expectedMessages.put(message.id, message.stored());
				if (message.state == State.SCHEDULED) {
					expectedScheduled.put(message.id, message.due);
				}
				else if (message.state == State.IN_FLIGHT) {
					expectedInFlight.put(message.id, message.deadline);
					expectedLeases.put(message.id, message.token);
				}
			}
			assertThat(messages).as(describe("stored messages")).isEqualTo(expectedMessages);
			assertThat(scheduled).as(describe("schedule")).isEqualTo(expectedScheduled);
			assertThat(ready).as(describe("ready list")).isEqualTo(this.model.ready);
			assertThat(readyLists).as(describe("ready lists by priority")).isEqualTo(this.model.readyLists);
			Map<String, String> expectedPriorities = new TreeMap<>();
			this.model.priorities.forEach((id, priority) -> expectedPriorities.put(id, priority.toString()));
			assertThat(priorities).as(describe("priorities")).isEqualTo(expectedPriorities);
			Map<String, String> expectedDeadPriorities = new TreeMap<>();
			this.model.deadPriorities.forEach((id, priority) -> expectedDeadPriorities.put(id, priority.toString()));
			assertThat(deadPriorities).as(describe("dead priorities")).isEqualTo(expectedDeadPriorities);
			assertThat(inFlight).as(describe("lease deadlines")).isEqualTo(expectedInFlight);
			assertThat(leases).as(describe("lease tokens")).isEqualTo(expectedLeases);
			assertThat(deadMessages).as(describe("dead messages"))
				.isEqualTo(this.model.dead.entrySet()
					.stream()
					.collect(Collectors.toMap(Map.Entry::getKey, (entry) -> entry.getValue().stored(), (a, b) -> a,
							TreeMap::new)));
			assertThat(deadErrors).as(describe("dead errors"))
				.isEqualTo(this.model.dead.entrySet()
					.stream()
					.collect(Collectors.toMap(Map.Entry::getKey, (entry) -> entry.getValue().error(), (a, b) -> a,
							TreeMap::new)));
			assertThat(dead).as(describe("times of death"))
				.isEqualTo(this.model.dead.entrySet()
					.stream()
					.collect(Collectors.toMap(Map.Entry::getKey, (entry) -> entry.getValue().diedAt(), (a, b) -> a,
							TreeMap::new)));

			assertThat(this.redis.opsForZSet().range(this.keys.remembered(), 0, -1))
				.as(describe("ids remembered for their deduplication window"))
				.containsExactlyInAnyOrderElementsOf(this.model.remembered.keySet());
			assertThat(this.redis.opsForValue().get(this.keys.deduplication()))
				.as(describe("the bound of remembered ids, once a send had a window"))
				.isEqualTo(this.model.deduplicating ? Integer.toString(QueueModel.MAX_REMEMBERED) : null);

			checkGroups(messages, scheduled, inFlight, priorities);
			checkDeadLetterQueue();
			assertThat(hash(this.keys.schedules())).as(describe("schedules")).isEqualTo(this.model.schedules);

			TopicStats stats = this.store.stats(this.topic);
			List<Live> next = this.model.scheduled();
			assertThat(List.of(stats.scheduled(), stats.ready(), stats.inFlight(), stats.dead(), stats.nextDueMillis(),
					stats.oldestReadyDueMillis()))
				.as(describe("stats: scheduled, ready, in flight, dead, next due, oldest ready due"))
				.containsExactly(this.model.count(State.SCHEDULED), this.model.count(State.READY),
						this.model.count(State.IN_FLIGHT), (long) this.model.dead.size(),
						next.isEmpty() ? -1 : next.get(0).due, this.model.oldestReadyDue(pausedAt(stats.nowMillis())));
			assertThat(stats.readyByPriority()).as(describe("stats: ready by priority"))
				.isEqualTo(this.model.readyByPriority());

			checkInspect();
		}

		/**
		 * The group keys: the groups hash as the model says (groups of stored messages
		 * only), the group ready set as the model says, and independently of the model:
		 * every ready message of a group has its exact member there; the counts are the
		 * numbers of members of each group, with no field for a group without one; the
		 * rotation holds the groups counted; the tags only those, the messages of no
		 * group ("") and the virtual time; no message in flight has its exact member
		 * there (a claim removes the member of what it leases). Stale members of other
		 * ranks are allowed, for a message in flight too: a cancel or a reschedule of a
		 * ready message leaves its member (claim.lua, cancel.lua: a claim drops it once
		 * it looks at it), and an id may be sent and made ready again meanwhile.
		 */
		private void checkGroups(Map<String, String> messages, Map<String, Long> scheduled, Map<String, Long> inFlight,
				Map<String, String> priorities) {
			Map<String, String> groups = hash(this.keys.groups());
			Set<String> groupReady = new TreeSet<>(this.redis.opsForZSet().range(this.keys.groupReady(), 0, -1));
			Map<String, String> counts = hash(this.keys.groupCounts());
			Set<String> rotation = new TreeSet<>(this.redis.opsForZSet().range(this.keys.groupRotation(), 0, -1));
			Map<String, String> tags = hash(this.keys.groupTags());
			assertThat(messages.keySet()).as(describe("groups only of stored messages")).containsAll(groups.keySet());
			assertThat(groups).as(describe("groups")).isEqualTo(this.model.groups);
			for (Map.Entry<String, String> entry : groups.entrySet()) {
				String id = entry.getKey();
				if (!scheduled.containsKey(id) && !inFlight.containsKey(id)) {
					String due = messages.get(id).split(":", 3)[1];
					String member = QueueModel.groupMember(entry.getValue(),
							Integer.parseInt(priorities.getOrDefault(id, "0")), Long.parseLong(due), id);
					assertThat(groupReady)
						.as(describe("ready " + id + " of group " + entry.getValue() + " has its member"))
						.contains(member);
				}
			}
			Map<String, String> expectedCounts = new TreeMap<>();
			groupReady.forEach((member) -> expectedCounts.merge(QueueModel.groupOfMember(member), "1",
					(a, b) -> Integer.toString(Integer.parseInt(a) + 1)));
			assertThat(counts).as(describe("group counts: the members of each group")).isEqualTo(expectedCounts);
			assertThat(rotation).as(describe("group rotation: the groups counted")).isEqualTo(counts.keySet());
			Set<String> tagged = new TreeSet<>(rotation);
			tagged.add("");
			tagged.add("\u0001V");
			assertThat(tagged).as(describe("group tags: of groups in the rotation, \"\" and the virtual time"))
				.containsAll(tags.keySet());
			for (String id : inFlight.keySet()) {
				String group = groups.get(id);
				if (group != null) {
					String due = messages.get(id).split(":", 3)[1];
					String member = QueueModel.groupMember(group, Integer.parseInt(priorities.getOrDefault(id, "0")),
							Long.parseLong(due), id);
					assertThat(groupReady).as(describe(id + " in flight has no member in place"))
						.doesNotContain(member);
				}
			}
			assertThat(groupReady).as(describe("group ready set")).isEqualTo(this.model.groupReady);
			checkGroupSlots(groups, inFlight, counts);
		}

		/**
		 * The group slots: each group's count is its messages in flight (no slot leaked,
		 * none counted twice, no field at 0 or below); a group parked in the rotation at
		 * its limit (+inf) has members in the group ready set (ready messages, or stale
		 * members that the claim which parked it did not reach) and a slot taken, whose
		 * freeing brings it back.
		 */
		private void checkGroupSlots(Map<String, String> groups, Map<String, Long> inFlight,
				Map<String, String> counts) {
			Map<String, String> expected = new TreeMap<>();
			for (String id : inFlight.keySet()) {
				String group = groups.get(id);
				if (group != null) {
					expected.merge(group, "1", (a, b) -> Integer.toString(Integer.parseInt(a) + 1));
				}
			}
			assertThat(hash(this.keys.groupSlots())).as(describe("group slots: each group's messages in flight"))
				.isEqualTo(expected);
			for (String group : parkedGroups()) {
				count("parked groups seen");
				assertThat(counts).as(describe("parked group " + group + " has ready messages counted"))
					.containsKey(group);
				// Its members may all be stale (left by a cancel or a reschedule): the
				// claim that parked it stopped before it looked at them; the claim after
				// a slot is freed drops them, and the group leaves the rotation.
				if (this.model.groupReady.stream()
					.noneMatch((member) -> QueueModel.groupOfMember(member).equals(group)
							&& this.model.validMember(member))) {
					count("parked groups with stale members only");
				}
				if (pauses().containsKey(group)) {
					// Paused (or its pause ended, to be ended by the next claim): parked
					// without a slot.
					count("parked groups paused");
					continue;
				}
				assertThat(expected).as(describe("parked group " + group + " has a slot taken, to be freed"))
					.containsKey(group);
			}
		}

		/**
		 * The dead-letter queue holds, on the ready list of its priority in the order
		 * they died, each dead letter that died while they were listened to, under its id
		 * or {@code <id>~<time>...}: its headers but the deduplication window, with its
		 * id, last error and attempts, and its payload, with no attempt made.
		 */
		private void checkDeadLetterQueue() {
			TopicKeys queue = this.keys.deadLetters();
			List<String> ready = new ArrayList<>();
			List<QueueModel.Queued> queued = new ArrayList<>();
			Map<String, String> priorities = new LinkedHashMap<>();
			for (int priority = 0; priority <= Script.MAX_PRIORITY; priority++) {
				int listed = priority;
				ready.addAll(
						this.redis.opsForList().range((priority == 0) ? queue.ready() : queue.ready(priority), 0, -1));
				this.model.queuedDeadLetters.stream().filter((dead) -> dead.priority() == listed).forEach(queued::add);
			}
			Map<String, String> messages = hash(queue.messages());
			assertThat(messages.keySet()).as(describe("dead-letter queue: every message is ready"))
				.containsExactlyInAnyOrderElementsOf(ready);
			assertThat(ready).as(describe("dead-letter queue: its ready lists")).hasSameSizeAs(queued);
			for (int i = 0; i < ready.size(); i++) {
				QueueModel.Queued expected = queued.get(i);
				String name = ready.get(i);
				if (expected.priority() > 0) {
					priorities.put(name, Integer.toString(expected.priority()));
				}
				assertThat(name).as(describe("dead-letter queue: name of " + expected.id()))
					.matches(Pattern.quote(expected.id()) + "(~[0-9]+~*)?");
				String stored = messages.get(name);
				assertThat(stored).as(describe("dead-letter queue: " + name + " ready at once with no attempt"))
					.startsWith("0:");
				StoredMessage copy = MessageFormat.decode(name, stored.getBytes(StandardCharsets.UTF_8));
				String[] died = expected.stored().split(":", 3);
				Map<String, String> headers = new LinkedHashMap<>();
				byte[] payload;
				try {
					StoredMessage message = MessageFormat.decode(expected.id(),
							expected.stored().getBytes(StandardCharsets.UTF_8));
					headers.putAll(message.headers());
					payload = message.payload();
				}
				catch (CorruptMessageException ex) {
					// Not in the stored format: the body becomes the payload whole.
					payload = died[2].getBytes(StandardCharsets.UTF_8);
				}
				headers.remove(MessageFormat.DEDUPLICATION_HEADER);
				headers.remove(MessageFormat.ERROR_HEADER);
				headers.put(MessageFormat.DEAD_ID_HEADER, expected.id());
				headers.put(MessageFormat.DEAD_ERROR_HEADER, expected.error());
				headers.put(MessageFormat.DEAD_ATTEMPTS_HEADER, died[0]);
				headers.put(MessageFormat.ERROR_HEADER, expected.error());
				assertThat(copy.attempts()).as(describe("dead-letter queue: attempts of " + name)).isZero();
				assertThat(copy.headers()).as(describe("dead-letter queue: headers of " + name))
					.containsExactlyEntriesOf(headers);
				assertThat(copy.payload()).as(describe("dead-letter queue: payload of " + name)).isEqualTo(payload);
			}
			assertThat(hash(queue.priorities())).as(describe("dead-letter queue: the priorities of its messages"))
				.isEqualTo(priorities);
		}

		private void checkInspect() {
			List<String> known = new ArrayList<>(this.model.live.keySet());
			known.addAll(this.model.dead.keySet());
			if (known.isEmpty()) {
				return;
			}
			String id = known.get(this.random.nextInt(known.size()));
			MessageSnapshot snapshot = this.store.inspect(this.topic, id, 1000);
			Live live = this.model.live.get(id);
			MessageState state = (live == null) ? MessageState.DEAD : switch (live.state) {
				case SCHEDULED -> MessageState.SCHEDULED;
				case READY -> MessageState.READY;
				case IN_FLIGHT -> MessageState.IN_FLIGHT;
			};
			String stored = (live != null) ? live.stored() : this.model.dead.get(id).stored();
			int priority = ((live != null) ? this.model.priorities : this.model.deadPriorities).getOrDefault(id, 0);
			assertThat(snapshot).as(describe("inspect " + id)).isNotNull();
			assertThat(snapshot.state()).as(describe("state of " + id)).isEqualTo(state);
			assertThat(new String(snapshot.storedPrefix(), StandardCharsets.UTF_8)).as(describe("stored " + id))
				.isEqualTo(stored);
			assertThat(snapshot.priority()).as(describe("priority of " + id)).isEqualTo(priority);
		}

		private Map<String, String> hash(String key) {
			Map<String, String> values = new TreeMap<>();
			this.redis.<String, String>opsForHash().entries(key).forEach(values::put);
			return values;
		}

		private Map<String, Long> zset(String key) {
			Map<String, Long> values = new TreeMap<>();
			Set<TypedTuple<String>> tuples = this.redis.opsForZSet().rangeWithScores(key, 0, -1);
			tuples.forEach((tuple) -> values.put(tuple.getValue(), tuple.getScore().longValue()));
			return values;
		}

		// --- Bookkeeping
		// ------------------------------------------------------------------------

		private long now() {
			return this.redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time());
		}

		private void note(String description) {
			this.history.addLast(this.step + ": " + description);
			if (this.history.size() > HISTORY) {
				this.history.removeFirst();
			}
		}

		private void count(String what) {
			count(what, 1);
		}

		private void count(String what, int n) {
			this.counts.merge(what, n, Integer::sum);
		}

		private Supplier<String> describe(String what) {
			return () -> what + " (seed " + this.seed + ", step " + this.step + "; replay with " + replayProperties()
			// The run's own number of steps: the run draws from it when the dead
			// letters are listened to and when groups start, so another number
			// makes another run.
					+ " -Ddelay-queue.model.steps=" + this.steps + ")\nlast steps:\n  "
					+ String.join("\n  ", this.history) + "\nmodel: " + abbreviate(this.model.live.values())
					+ "\nready list: " + abbreviate(this.model.ready) + "\ngroups: " + this.model.groups
					+ "\ngroup ready set: "
					+ abbreviate(this.model.groupReady.stream().map((member) -> member.replace('\0', '|')).toList())
					+ "\ndead: " + abbreviate(this.model.dead.keySet());
		}

		private String replayProperties() {
			return "-Ddelay-queue.model.seed=" + this.seed
					+ (this.latency.isZero() ? "" : " -Ddelay-queue.model.latency-ms=" + this.latency.toMillis());
		}

		/**
		 * @return -1 for none, 0 for now, 1 for later
		 */
		private static long signum(@Nullable Duration until) {
			return (until != null) ? until.compareTo(Duration.ZERO) : -1;
		}

		private static String abbreviate(Collection<?> values) {
			return (values.size() <= 40) ? values.toString()
					: values.stream()
						.limit(40)
						.map(String::valueOf)
						.collect(Collectors.joining(", ", "[", ", ... (" + values.size() + " in all)]"));
		}

	}

	/**
	 * One store call, made by a client: its request is fixed when it is created, so that
	 * it can be sent again as it was.
	 */
	private abstract static class Operation {

		private final String description;

		private final List<String> extraKeys;

		private final Set<String> alwaysTouched;

		/**
		 * @param description what the call is, for failure messages
		 * @param alwaysTouched the keys the script reads or writes on every call
		 */
		Operation(String description, String... alwaysTouched) {
			this(description, List.of(), alwaysTouched);
		}

		Operation(String description, List<String> extraKeys, String... alwaysTouched) {
			this.description = description;
			this.extraKeys = extraKeys;
			this.alwaysTouched = Set.of(alwaysTouched);
		}

		/**
		 * @return the call's reply
		 */
		abstract Object run();

		/**
		 * Applies the call to the model and checks its reply.
		 * @param reply the reply
		 * @param before Redis time read just before the call
		 * @param after Redis time read just after it
		 */
		abstract void expect(Object reply, long before, long after);

		/**
		 * @return whether a dropped reply of this call may be simulated
		 */
		boolean resendable() {
			return true;
		}

		/**
		 * @return whether this is a claim that the rotation of the groups serves
		 */
		boolean servedByRotation() {
			return false;
		}

		/**
		 * @return the group concurrency of a claim, 0 for none or for another call
		 */
		int groupConcurrency() {
			return 0;
		}

		/**
		 * Checks the documented relation between a call and the same call sent again.
		 * @param first the first reply
		 * @param second the second reply
		 */
		void expectSentAgain(Object first, Object second) {
		}

		/**
		 * @return keys beyond the topic's that the call uses (a consumer's claim record)
		 */
		List<String> extraKeys() {
			return this.extraKeys;
		}

		Set<String> alwaysTouched() {
			return this.alwaysTouched;
		}

		@Override
		public String toString() {
			return this.description;
		}

	}

	/** A consumer: its id, its lease tokens, and the leases it believes it holds. */
	private static final class Consumer {

		final String id;

		final Map<String, String> held = new LinkedHashMap<>();

		/**
		 * The token of its last claim that leased messages with a long lease, while that
		 * claim is its recorded one; {@code null} otherwise.
		 */
		@Nullable String lastClaim;

		private int tokens;

		Consumer(String id) {
			this.id = id;
		}

		String nextToken() {
			return this.id + "." + (++this.tokens);
		}

		/** The consumer is done with a lease, whatever the reply said. */
		void done(String id, String token) {
			this.held.remove(id, token);
		}

	}

	/**
	 * What the model test mostly does next, after a cancel of a ready message with a
	 * priority (send its id again, promote, claim), or after a message with a priority
	 * died (send its id again, promote, claim, settle the new message, replay the dead
	 * letter).
	 */
	private enum Followup {

		NONE(0), SEND(7), REVIVE(9), PROMOTE(7), CLAIM(7), SETTLE(9), REPLAY(9);

		/** In how many of ten steps it is done when it is next. */
		final int odds;

		Followup(int odds) {
			this.odds = odds;
		}

	}

	/**
	 * A key's {@code DUMP} and time to live, to restore it.
	 *
	 * @param value the serialized value
	 * @param ttl ms to live, 0 for none
	 */
	private record Dump(byte[] value, long ttl) {
	}

}
