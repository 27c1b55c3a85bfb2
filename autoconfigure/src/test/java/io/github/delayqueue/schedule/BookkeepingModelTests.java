package io.github.delayqueue.schedule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.function.Supplier;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.ScheduleDefinition;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * A randomized, model-based test of the queue's bookkeeping beside the messages: the
 * schedules and their registry, the dead-letter watches, the remembered ids of
 * deduplicating sends, the partition counts, and what happens when Redis lost everything.
 * <p>
 * <b>What runs.</b> Two application contexts ("instances" A and B) on one key prefix of a
 * private redis-server (the test flushes it). Each declares schedules in its properties
 * (A: {@code a-own} on {@code t1}; B: {@code b-own} on {@code t2}; both: {@code both} on
 * {@code parts}, a topic of three partitions), listens to {@code parts} and to its dead
 * letters (so a dead-letter watch is set on every partition). A third context (C) spreads
 * {@code parts} over two partitions: it only ever tries to change the count. The schedule
 * pollers' and data-loss watches' own threads are stopped; the test drives
 * {@link SchedulePoller#pollOnce()} and {@link RedisDataLossWatch#check()} by hand, so
 * the order of everything the bookkeeping depends on is the seed's.
 * <p>
 * <b>Steps.</b> Saves through the API (a random instance, name, topic among three, and
 * one of two definitions), removes, pauses, resumes, triggers and polls by a random
 * instance; the race of a remove's two halves ({@code remove} then {@code unregister})
 * with a whole save in between; two saves of one name on two topics interleaved at the
 * store level (both {@code register} halves before either {@code save} half); a save
 * whose registry call succeeded but whose partition write never happened, and one whose
 * partition write happened without its registry call; a send with a deduplication window
 * and its acknowledgement by the listener; an attempt to change {@code parts}' number of
 * partitions while it holds schedules; a key of the wrong type in place of the registry
 * or of a schedules hash; and {@code FLUSHALL}, Redis losing everything.
 * <p>
 * <b>The bound.</b> After each step each instance polls once (in a random order), and
 * checks its data-loss marker. After the registry was replaced by a key of the wrong type
 * (done only while every declared schedule is on its own topic), A then B poll twice: a
 * quarantined registry has lost its topics, the first looks register them again through
 * the declared schedules (saved with their declared definitions) and the second finds the
 * others there. A registry lost while a topic holds no declared schedule loses that
 * topic's other schedules for good (documented: the pollers restore only what is
 * declared), so the model leaves that case out. Then these hold: every schedule state in
 * any schedules hash is in the partition of its name, registered to its topic, and on no
 * other topic; every schedule the model says exists (saved and not removed since, the
 * declared ones always, a flush or a quarantined hash dropping the others) is registered,
 * stored as saved (definition and pause), and seen alike by {@code get()} and
 * {@code list()} of both instances, and no other is; the dead-letter watch is on every
 * partition of {@code parts} (after a flush, within 10 seconds: it is set again every 5);
 * a send with a deduplication window is a duplicate exactly when the model remembers its
 * id; after a flush, sends to {@code parts} are stored and delivered again, and each
 * instance's {@code check()} reports the loss once.
 * <p>
 * <b>Open hole, off by default.</b> With {@code -Ddelay-queue.model.stale-claims=true}
 * half of the interleaved saves make the second save's reads (registry, then "no state
 * there") before the whole first save, on the topic a registration without state was left
 * to: the second claim takes the name from that topic though the first save just put its
 * state there and was told it is saved (the claim compares only the topic name), so both
 * saves are told saved and the next look removes the first. Seed 7, 400 steps, fails at
 * step 253 this way; it stays off until the registry's claim can tell a stale
 * registration from a new one of the same topic.
 * <p>
 * <b>Running.</b> By default one random seed of 150 steps, well under a minute. A failure
 * names its seed and step; run it again with {@code -Ddelay-queue.model.seed=<seed>}, and
 * longer with {@code -Ddelay-queue.model.steps=<n>}: <pre>
 * ./mvnw -B -pl autoconfigure test -Dtest=BookkeepingModelTests \
 *     -Ddelay-queue.model.steps=2000 -Ddelay-queue.model.seed=42
 * </pre>
 */
class BookkeepingModelTests {

	private static final List<String> TOPICS = List.of("t1", "t2", "parts");

	private static final String PARTS = "parts";

	private static final List<String> NAMES = List.of("s0", "s1", "s2", "s3", "a-own", "b-own", "both");

	private static final Duration BOUND = Duration.ofSeconds(10);

	@Test
	void randomStepsOfScheduleAndQueueBookkeepingWithRedisLosingEverythingKeepWhatIsDeclared() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		Long fixedSeed = Long.getLong("delay-queue.model.seed");
		long seed = (fixedSeed != null) ? fixedSeed : new Random().nextLong();
		int steps = Integer.getInteger("delay-queue.model.steps", 150);
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			String prefix = QueueContexts.uniquePrefix();
			ApplicationContextRunner runner = QueueContexts.runner(prefix, redis.springProperties())
				.withPropertyValues("delay-queue.topics.parts.partitions=3", "delay-queue.schedules.both.topic=parts",
						"delay-queue.schedules.both.fixed-rate=1h", "delay-queue.schedules.both.payload=both")
				.withUserConfiguration(PartsListener.class);
			runner
				.withPropertyValues("delay-queue.schedules.a-own.topic=t1", "delay-queue.schedules.a-own.fixed-rate=1h",
						"delay-queue.schedules.a-own.payload=a")
				.run((a) -> runner
					.withPropertyValues("delay-queue.schedules.b-own.topic=t2",
							"delay-queue.schedules.b-own.fixed-rate=1h", "delay-queue.schedules.b-own.payload=b")
					.run((b) -> QueueContexts.runner(prefix, redis.springProperties())
						.withPropertyValues("delay-queue.topics.parts.partitions=2")
						.run((c) -> new Run(seed, prefix, List.of(new Instance("A", a), new Instance("B", b)),
								new Instance("C", c))
							.steps(steps))));
		}
	}

	/** One application context, its poller and watch driven by hand. */
	static final class Instance {

		final String name;

		final RedisMessageStore store;

		final ScheduleStore schedules;

		final DelayQueueSchedules api;

		final SchedulePoller poller;

		final RedisDataLossWatch lossWatch;

		final DelayQueueTemplate template;

		final PartsListener listener;

		final StringRedisTemplate redis;

		Instance(String name, AssertableApplicationContext context) {
			assertThat(context).hasNotFailed();
			this.name = name;
			this.store = context.getBean(RedisMessageStore.class);
			this.schedules = this.store.schedules();
			this.api = context.getBean(DelayQueueSchedules.class);
			this.poller = context.getBean(SchedulePoller.class);
			this.lossWatch = context.getBean(RedisDataLossWatch.class);
			this.template = context.getBean(DelayQueueTemplate.class);
			this.listener = context.getBeanProvider(PartsListener.class).getIfAvailable(PartsListener::new);
			this.redis = context.getBean(StringRedisTemplate.class);
			this.poller.stop();
			this.lossWatch.stop();
		}

	}

	/** What the model says of one schedule. */
	record Expected(String topic, ScheduleDefinition definition, boolean paused) {

		@Override
		public String toString() {
			return this.topic + "/" + this.definition.toString().replace('\n', '|') + (this.paused ? "/paused" : "");
		}

	}

	/** One run of one seed. */
	static final class Run {

		private final long seed;

		private final Random random;

		private final String prefix;

		private final List<Instance> instances;

		private final Instance counter;

		private final StringRedisTemplate redis;

		/** The schedules that exist, by name. */
		private final Map<String, Expected> model = new TreeMap<>();

		/** The declared schedules, by name: saved again whenever gone. */
		private final Map<String, Expected> declared = new TreeMap<>();

		/** The ids sent with a deduplication window since Redis last lost everything. */
		private final Set<String> remembered = new TreeSet<>();

		private final List<String> history = new ArrayList<>();

		private int step;

		private boolean flushed;

		/** How many looks each instance takes in the bound after the step. */
		private int rounds = 1;

		/** Whether the bound after the step polls A first, then B. */
		private boolean inOrder;

		private int sends;

		Run(long seed, String prefix, List<Instance> instances, Instance counter) {
			this.seed = seed;
			this.random = new Random(seed);
			this.prefix = prefix;
			this.instances = instances;
			this.counter = counter;
			this.redis = instances.get(0).redis;
		}

		void steps(int steps) {
			bound();
			for (String name : List.of("a-own", "b-own", "both")) {
				ScheduleInfo info = this.instances.get(0).api.get(name).orElseThrow();
				Expected expected = new Expected(info.schedule().topic(), ScheduleDefinitions.of(info.schedule()),
						false);
				this.declared.put(name, expected);
				this.model.put(name, expected);
			}
			this.instances.forEach((instance) -> instance.lossWatch.check());
			check();
			for (this.step = 1; this.step <= steps; this.step++) {
				try {
					step();
					bound();
					check();
				}
				catch (Throwable ex) {
					fail("Seed " + this.seed + " failed at step " + this.step + " of " + steps
							+ " (run again with -Ddelay-queue.model.seed=" + this.seed + "); last steps:\n  "
							+ String.join("\n  ",
									this.history.subList(Math.max(0, this.history.size() - 15), this.history.size())),
							ex);
				}
			}
		}

		private void note(String what) {
			this.history.add(this.step + ": " + what);
		}

		private Instance anyInstance() {
			return this.instances.get(this.random.nextInt(this.instances.size()));
		}

		private <T> T any(List<T> values) {
			return values.get(this.random.nextInt(values.size()));
		}

		private Schedule definition(String name, String topic) {
			return Schedule.fixedRate(name, topic, Duration.ofHours(1 + this.random.nextInt(2)))
				.withPayload("p" + this.random.nextInt(2));
		}

		private void step() {
			int roll = this.random.nextInt(100);
			if (roll < 20) {
				apiSave();
			}
			else if (roll < 28) {
				apiRemove();
			}
			else if (roll < 36) {
				pauseOrResume();
			}
			else if (roll < 40) {
				trigger();
			}
			else if (roll < 48) {
				Instance instance = anyInstance();
				note(instance.name + " polls");
				instance.poller.pollOnce();
			}
			else if (roll < 58) {
				removeRacingSave();
			}
			else if (roll < 66) {
				interleavedSavesOnTwoTopics();
			}
			else if (roll < 71) {
				registeredButNeverSaved();
			}
			else if (roll < 76) {
				savedButNeverRegistered();
			}
			else if (roll < 86) {
				deduplicatingSend();
			}
			else if (roll < 90) {
				countChange();
			}
			else if (roll < 96) {
				wrongType();
			}
			else {
				flushAll();
			}
		}

		private void apiSave() {
			Instance instance = anyInstance();
			String name = any(NAMES);
			Schedule schedule = definition(name, any(TOPICS));
			Expected before = this.model.get(name);
			note(instance.name + " saves " + name + " on " + schedule.topic() + " as "
					+ ScheduleDefinitions.of(schedule).toString().replace('\n', '|') + " (model: " + before + ")");
			if (before != null && !before.topic().equals(schedule.topic())) {
				assertRefused(() -> instance.api.save(schedule));
				return;
			}
			String registered = instance.schedules.registry().names().get(name);
			if (before == null && registered != null && !registered.equals(schedule.topic())) {
				// Registered to a topic that lost its schedule (a key of the wrong type
				// moved
				// aside, a save cut off): taken from there only a save time after its
				// last
				// claim, else refused as a save there may still be on its way.
				try {
					instance.api.save(schedule);
				}
				catch (IllegalArgumentException ex) {
					assertThat(ex).hasMessageContaining("may still be on its way");
					return;
				}
				this.model.put(name, new Expected(schedule.topic(), ScheduleDefinitions.of(schedule), false));
				return;
			}
			ScheduleInfo info = instance.api.save(schedule);
			boolean paused = before != null && before.paused();
			assertThat(info.paused()).as("paused as it was").isEqualTo(paused);
			this.model.put(name, new Expected(schedule.topic(), ScheduleDefinitions.of(schedule), paused));
		}

		private void apiRemove() {
			Instance instance = anyInstance();
			String name = any(NAMES);
			note(instance.name + " removes " + name + " (model: " + this.model.get(name) + ")");
			assertThat(instance.api.remove(name)).as("removed").isEqualTo(this.model.remove(name) != null);
		}

		private void pauseOrResume() {
			Instance instance = anyInstance();
			String name = any(NAMES);
			boolean pause = this.random.nextBoolean();
			Expected before = this.model.get(name);
			note(instance.name + (pause ? " pauses " : " resumes ") + name + " (model: " + before + ")");
			if (before == null) {
				assertRefused(() -> pause ? instance.api.pause(name) : instance.api.resume(name));
				return;
			}
			boolean changed = pause ? instance.api.pause(name) : instance.api.resume(name);
			assertThat(changed).as("changed").isEqualTo(before.paused() != pause);
			this.model.put(name, new Expected(before.topic(), before.definition(), pause));
		}

		private void trigger() {
			Instance instance = anyInstance();
			String name = any(NAMES);
			note(instance.name + " triggers " + name + " (model: " + this.model.get(name) + ")");
			if (this.model.containsKey(name)) {
				assertThat(instance.api.trigger(name).duplicate()).as("duplicate").isFalse();
			}
			else {
				assertRefused(() -> instance.api.trigger(name));
			}
		}

		/**
		 * Issue 34 item 1: X's remove runs its script, then Y's whole save, then X
		 * forgets the registration.
		 */
		private void removeRacingSave() {
			List<String> present = new ArrayList<>(this.model.keySet());
			String name = any(present);
			Expected before = this.model.get(name);
			Instance x = anyInstance();
			Instance y = anyInstance();
			Schedule schedule = definition(name, this.random.nextBoolean() ? before.topic() : any(TOPICS));
			note(x.name + " removes " + name + " from " + before.topic() + ", " + y.name + " saves it on "
					+ schedule.topic() + " meanwhile, then " + x.name + " unregisters it");
			assertThat(x.schedules.remove(before.topic(), name, null)).as("removed").isTrue();
			this.model.remove(name);
			if (schedule.topic().equals(before.topic())) {
				y.api.save(schedule);
				this.model.put(name, new Expected(schedule.topic(), ScheduleDefinitions.of(schedule), false));
			}
			else {
				// The name is still registered to the other topic: the remove has not
				// finished. The save takes it from there only once its last claim is
				// older than a save takes; else it is refused (moving a schedule takes a
				// remove, then a save). Either is an order the two calls may have had.
				try {
					y.api.save(schedule);
					this.model.put(name, new Expected(schedule.topic(), ScheduleDefinitions.of(schedule), false));
				}
				catch (IllegalArgumentException ex) {
					assertThat(ex).hasMessageContaining("may still be on its way");
				}
			}
			x.schedules.unregister(name, before.topic());
		}

		/**
		 * Issue 34 item 3: two saves of a name on two topics, as
		 * {@link DelayQueueSchedules#save} makes them (registry read, claim, save half,
		 * registry checked again, own state taken back if the name went elsewhere), both
		 * registry reads and claims before either save half. With
		 * {@code -Ddelay-queue.model.stale-claims=true}, the second save's reads come
		 * before the whole first save instead (see the class's Javadoc).
		 */
		private void interleavedSavesOnTwoTopics() {
			String name = any(NAMES);
			if (this.model.containsKey(name)) {
				return;
			}
			Instance x = anyInstance();
			Instance y = anyInstance();
			boolean stale = Boolean.getBoolean("delay-queue.model.stale-claims") && this.random.nextBoolean();
			String left = x.schedules.registry().names().get(name);
			// A stale claim matters where a registration without state was left behind.
			Schedule first = definition(name, (stale && left != null) ? left : any(TOPICS));
			Schedule second = definition(name, any(TOPICS));
			note(x.name + " and " + y.name + " save " + name + " on " + first.topic() + " and " + second.topic()
					+ (stale ? ", the second from reads made before the whole first" : ", registry halves first")
					+ " (registered: " + x.schedules.registry().names().get(name) + ")");
			String registered = x.schedules.registry().names().get(name);
			String xTaking = takingFrom(x, name, registered, first.topic());
			String yTaking = takingFrom(y, name, registered, second.topic());
			boolean xSaved;
			boolean ySaved;
			if (stale) {
				xSaved = savedHalves(x, first, xTaking);
				ySaved = savedHalves(y, second, yTaking);
			}
			else {
				boolean xClaimed = x.schedules.register(name, first.topic(), xTaking).equals(first.topic());
				boolean yClaimed = y.schedules.register(name, second.topic(), yTaking).equals(second.topic());
				xSaved = xClaimed && saveHalf(x, first) && kept(x, first);
				ySaved = yClaimed && saveHalf(y, second) && kept(y, second);
			}
			assertThat(xSaved && ySaved && !first.topic().equals(second.topic()))
				.as("both saves told saved, on two topics")
				.isFalse();
			if (ySaved) {
				this.model.put(name, new Expected(second.topic(), ScheduleDefinitions.of(second), false));
			}
			else if (xSaved) {
				this.model.put(name, new Expected(first.topic(), ScheduleDefinitions.of(first), false));
			}
		}

		/** The claim, save half and check of one save, in a row. */
		private boolean savedHalves(Instance instance, Schedule schedule, String takingFrom) {
			return instance.schedules.register(schedule.name(), schedule.topic(), takingFrom).equals(schedule.topic())
					&& saveHalf(instance, schedule) && kept(instance, schedule);
		}

		/**
		 * The check after a save half: the save takes back its state if the name went
		 * elsewhere.
		 */
		private static boolean kept(Instance instance, Schedule schedule) {
			String now = instance.schedules.registry().names().get(schedule.name());
			if (now != null && !now.equals(schedule.topic())) {
				ScheduleState state = instance.schedules.read(schedule.topic(), schedule.name())
					.schedules()
					.get(schedule.name());
				if (state != null) {
					instance.schedules.remove(schedule.topic(), schedule.name(), state);
				}
				return false;
			}
			return true;
		}

		private static String takingFrom(Instance instance, String name, String registered, String topic) {
			if (registered == null || registered.equals(topic)) {
				return null;
			}
			return instance.schedules.read(registered, name).schedules().containsKey(name) ? null : registered;
		}

		private static boolean saveHalf(Instance instance, Schedule schedule) {
			ScheduleStore.SchedulesRead read = instance.schedules.read(schedule.topic(), schedule.name());
			assertThat(instance.schedules.save(schedule.topic(), schedule.name(), ScheduleDefinitions.of(schedule),
					schedule.nextAfter(read.nowMillis()), read.schedules().get(schedule.name())))
				.as("saved")
				.isNotNull();
			return true;
		}

		/**
		 * A save whose registry call succeeded but whose partition write never happened,
		 * longer than a save takes ago (its claim time is set back so: a claim younger
		 * than that keeps the name from other topics, as the interleaved saves check).
		 */
		private void registeredButNeverSaved() {
			Instance instance = anyInstance();
			String name = any(NAMES);
			String topic = any(TOPICS);
			Expected before = this.model.get(name);
			note(instance.name + " registers " + name + " to " + topic + " and saves nothing (model: " + before + ")");
			String registered = instance.schedules.register(name, topic, null);
			if (before != null) {
				assertThat(registered).as("registered").isEqualTo(before.topic());
			}
			else {
				this.redis.opsForHash().put(TopicKeys.scheduleRegistry(this.prefix), "~#" + name, "0");
			}
		}

		/**
		 * A schedule state written without its registry call (a registry write lost, a
		 * stale instance): found by the pollers, registered, or removed when the name is
		 * registered to another topic where it exists.
		 */
		private void savedButNeverRegistered() {
			Instance instance = anyInstance();
			String name = any(NAMES);
			Schedule schedule = definition(name, any(TOPICS));
			Expected before = this.model.get(name);
			note(instance.name + " writes " + name + " on " + schedule.topic() + " without registering it (model: "
					+ before + ")");
			ScheduleStore.SchedulesRead read = instance.schedules.read(schedule.topic(), name);
			ScheduleState current = read.schedules().get(name);
			ScheduleState saved = instance.schedules.save(schedule.topic(), name, ScheduleDefinitions.of(schedule),
					schedule.nextAfter(read.nowMillis()), current);
			if (before == null) {
				this.model.put(name, new Expected(schedule.topic(), ScheduleDefinitions.of(schedule), false));
			}
			else if (before.topic().equals(schedule.topic())) {
				assertThat(saved).isNotNull();
				this.model.put(name, new Expected(before.topic(), ScheduleDefinitions.of(schedule), before.paused()));
			}
		}

		private void deduplicatingSend() {
			Instance instance = anyInstance();
			String id = "k" + this.random.nextInt(4);
			boolean duplicate = this.remembered.contains(id);
			note(instance.name + " sends " + id + " to parts, deduplicated for a day (remembered: " + duplicate + ")");
			DelayMessage message = DelayMessage.builder(PARTS, "d")
				.id(id)
				.delay(Duration.ZERO)
				.deduplicateFor(Duration.ofDays(1))
				.build();
			assertThat(instance.template.send(message).duplicate()).as("duplicate").isEqualTo(duplicate);
			if (!duplicate) {
				this.remembered.add(id);
				await().atMost(BOUND).until(() -> delivered(id));
			}
		}

		private boolean delivered(String id) {
			return this.instances.stream().anyMatch((instance) -> instance.listener.received.contains(id));
		}

		/** C spreads parts over two partitions: refused while parts holds schedules. */
		private void countChange() {
			note("C sends to parts over 2 partitions");
			assertThatException().isThrownBy(() -> this.counter.template.send(PARTS, "c", Duration.ofHours(1)))
				.withRootCauseInstanceOf(PartitionCountException.class);
		}

		private void wrongType() {
			String key;
			// The registry only while every declared schedule is on its topic: else
			// which topics come back depends on the order of the first looks.
			boolean registry = this.random.nextInt(3) == 0 && this.declared.entrySet()
				.stream()
				.allMatch((entry) -> entry.getValue().topic().equals(this.model.get(entry.getKey()).topic()));
			if (registry) {
				key = TopicKeys.scheduleRegistry(this.prefix);
				// Moved aside, what it held is lost; but no schedule is: the first look
				// of
				// each instance finds the topics holding schedules in Redis (a SCAN) and
				// registers every schedule found there, as it is.
				this.rounds = 2;
				this.inOrder = true;
			}
			else {
				String topic = any(TOPICS);
				List<String> partitions = TopicPartitions.names(topic, topic.equals(PARTS) ? 3 : 1);
				key = this.instances.get(0).store.keys(any(partitions)).schedules();
				// What the hash held is lost (moved aside); the declared ones come back.
				// Their registrations stay until forgotten a save time after their last
				// claim: the steps stand for that time having passed (a state of the
				// name written elsewhere meanwhile takes the registration over only
				// then).
				Set<Object> lost = this.redis.opsForHash().keys(key);
				lost.forEach((name) -> {
					this.model.remove((String) name);
					if (!this.declared.containsKey((String) name)) {
						this.redis.opsForHash().put(TopicKeys.scheduleRegistry(this.prefix), "~#" + name, "0");
					}
				});
				this.declared.forEach(this.model::putIfAbsent);
			}
			note("a string in place of " + key);
			this.redis.delete(key);
			this.redis.opsForValue().set(key, "wrong type");
		}

		private void flushAll() {
			note("FLUSHALL");
			this.redis.getRequiredConnectionFactory().getConnection().serverCommands().flushAll();
			this.model.clear();
			this.model.putAll(this.declared);
			this.remembered.clear();
			this.flushed = true;
		}

		private void assertRefused(Supplier<?> call) {
			try {
				Object result = call.get();
				fail("expected a refusal, got " + result);
			}
			catch (RuntimeException ex) {
				if (ex instanceof DataAccessException) {
					throw ex;
				}
			}
		}

		/**
		 * Each instance polls once, in a random order, and reads its data-loss marker.
		 */
		private void bound() {
			List<Instance> order = new ArrayList<>(this.instances);
			if (!this.inOrder) {
				Collections.shuffle(order, this.random);
			}
			this.inOrder = false;
			for (int round = 0; round < this.rounds; round++) {
				order.forEach((instance) -> instance.poller.pollOnce());
			}
			this.rounds = 1;
			// A declared schedule removed (through the API, a flush, a quarantined hash)
			// is
			// saved again by the first look.
			this.declared.forEach(this.model::putIfAbsent);
			boolean flushed = this.flushed;
			this.flushed = false;
			for (Instance instance : this.instances) {
				assertThat(instance.lossWatch.check()).as(instance.name + " reports a loss").isEqualTo(flushed);
			}
			if (flushed) {
				this.instances.forEach((instance) -> assertThat(instance.lossWatch.check())
					.as(instance.name + " reports the loss once")
					.isFalse());
				// Sends to the partitioned topic are stored and delivered again.
				for (Instance instance : this.instances) {
					String id = "after-flush-" + (++this.sends);
					instance.template.send(DelayMessage.builder(PARTS, "f").id(id).delay(Duration.ZERO).build());
					await().atMost(BOUND).until(() -> delivered(id));
				}
				await().atMost(BOUND).until(this::watched);
			}
		}

		private boolean watched() {
			return TopicPartitions.names(PARTS, 3)
				.stream()
				.allMatch((partition) -> Boolean.TRUE
					.equals(this.redis.hasKey(this.instances.get(0).store.keys(partition).deadLettersWatch())));
		}

		private void check() {
			Map<String, String> registry = new HashMap<>();
			this.redis.<String, String>opsForHash()
				.entries(TopicKeys.scheduleRegistry(this.prefix))
				.forEach((field, value) -> {
					if (!field.startsWith("~")) {
						registry.put(field, value);
					}
				});
			// Every state is in the partition of its name, registered to its topic, and
			// on no other topic.
			Map<String, String> stored = new TreeMap<>();
			Map<String, String> states = new LinkedHashMap<>();
			for (String topic : TOPICS) {
				for (String partition : TopicPartitions.names(topic, topic.equals(PARTS) ? 3 : 1)) {
					String key = this.instances.get(0).store.keys(partition).schedules();
					this.redis.<String, String>opsForHash().entries(key).forEach((name, state) -> {
						String other = stored.put(name, topic);
						assertThat(other).as("schedule '" + name + "' found on " + topic + " and " + other).isNull();
						assertThat(this.instances.get(0).store.partitions().nameFor(topic, name))
							.as("the partition of schedule '" + name + "'")
							.isEqualTo(partition);
						states.put(name, state);
					});
				}
			}
			stored.forEach((name, topic) -> assertThat(registry.get(name))
				.as("the registration of schedule '" + name + "', stored on " + topic)
				.isEqualTo(topic));
			// Every schedule the model has exists as saved, and no other.
			Map<String, String> expectedTopics = new TreeMap<>();
			this.model.forEach((name, expected) -> expectedTopics.put(name, expected.topic()));
			assertThat(stored).as("the schedules stored, by topic").isEqualTo(expectedTopics);
			for (Instance instance : this.instances) {
				Map<String, Expected> listed = new TreeMap<>();
				instance.api.list()
					.forEach((info) -> listed.put(info.schedule().name(), new Expected(info.schedule().topic(),
							ScheduleDefinitions.of(info.schedule()), info.paused())));
				assertThat(listed).as(instance.name + "'s list()").isEqualTo(this.model);
				for (String name : NAMES) {
					Optional<Expected> got = instance.api.get(name)
						.map((info) -> new Expected(info.schedule().topic(), ScheduleDefinitions.of(info.schedule()),
								info.paused()));
					assertThat(got).as(instance.name + "'s get(" + name + ")")
						.isEqualTo(Optional.ofNullable(this.model.get(name)));
				}
			}
			assertThat(watched()).as("the dead-letter watch on every partition of parts").isTrue();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PartsListener {

		final Set<String> received = new CopyOnWriteArraySet<>();

		@DelayListener(topic = PARTS)
		void on(Delivery<String> delivery) {
			this.received.add(delivery.id());
		}

		@DelayListener(topic = PARTS, deadLetters = true)
		void onDead(Delivery<String> delivery) {
		}

	}

}
