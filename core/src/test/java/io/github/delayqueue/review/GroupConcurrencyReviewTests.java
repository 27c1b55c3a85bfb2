package io.github.delayqueue.review;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.Interruptibly;
import io.github.delayqueue.time.RetryBackoff;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ReflectionUtils;

import static io.github.delayqueue.review.GroupsReviewTests.due;
import static io.github.delayqueue.review.GroupsReviewTests.ids;
import static io.github.delayqueue.review.GroupsThirdReviewTests.evalshaCalls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the group concurrency limit (issue 38, step 5) on a real Redis:
 * where the group slots meet the rest of the queue.
 */
class GroupConcurrencyReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	/**
	 * An id left in a ready list by a cancel, sent again in a group, is taken from the
	 * list (claim.lua's "lists" turn, or take_from_lists when the group ready set is
	 * empty): that take is not counted in the group's slots, yet its ack frees one.
	 */
	@Test
	void aGroupedMessageTakenFromAReadyListCountsInItsGroupsSlots() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("x", 5)));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			store.send(TOPIC, List.of(due("x", 7).inGroup("g"), due("y", 8).inGroup("g")));
			List<ClaimedMessage> claimed = claim(store, 10, 1);
			assertThat(ids(claimed))
				.as("group g has a limit of 1; slots %s", redis.opsForHash().entries(keys.groupSlots()))
				.hasSizeLessThanOrEqualTo(1);
		}
	}

	/**
	 * Three instances with a group concurrency of 1, one behind a proxy that delays every
	 * reply by 3 ms, one behind a proxy that drops the reply to one claim and to one ack
	 * after Redis ran them (the client sends them again); handlers fail one message in
	 * five once (a retry). No group ever has two messages in handlers at once, every
	 * message is handled, and once all are acknowledged no slot, no parked group and no
	 * rotation entry is left.
	 */
	@Test
	void noGroupHasMoreMessagesInHandlersThanItsLimitAcrossThreeInstancesWithSlowAndLostReplies() {
		String prefix = TestStore.uniquePrefix();
		Handlers handlers = new Handlers(20);
		try (TestStore sender = TestStore.builder().prefix(prefix).build();
				App slow = new App(prefix, true, 1, 3, handlers);
				App lossy = new App(prefix, true, 1, 3, handlers);
				App plain = new App(prefix, false, 1, 3, handlers)) {
			slow.store.proxy().latency(Duration.ofMillis(3));
			FaultyRedisProxy.Fault lostClaim = lossy.store.proxy()
				.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", ":c:"));
			FaultyRedisProxy.Fault lostAck = lossy.store.proxy()
				.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "g2-5"));
			List<String> ids = send(sender, 4, 12);
			await().atMost(Duration.ofSeconds(25)).until(() -> handlers.done.keySet().containsAll(ids));
			TopicKeys keys = sender.store().keys(TOPIC);
			StringRedisTemplate redis = sender.redis();
			await().atMost(Duration.ofSeconds(5)).until(() -> redis.opsForZSet().zCard(keys.inFlight()) == 0);
			System.out.println("GroupConcurrencyReviewTests three instances: most in handlers per group "
					+ handlers.most + ", lost claim fired " + lostClaim.hasFired() + ", lost ack fired "
					+ lostAck.hasFired() + ", gaps (ms) " + handlers.gapSummary());
			assertThat(handlers.most.values()).as("most messages of a group in handlers at once").containsOnly(1);
			assertThat(redis.opsForHash().entries(keys.groupSlots())).as("slots left").isEmpty();
			assertThat(redis.opsForZSet().zCard(keys.groupRotation())).as("groups left in the rotation").isZero();
		}
	}

	/**
	 * Liveness: with a limit of 1 and two instances, a group's next message starts soon
	 * after the previous one is acknowledged (the ack's signal), not at an idle check
	 * (every 2 s here). Measured: the gap between one handler's end and the next start.
	 */
	@Test
	void aGroupsNextMessageStartsSoonAfterTheAckNotAtTheNextIdleCheck() {
		String prefix = TestStore.uniquePrefix();
		Handlers handlers = new Handlers(10);
		try (TestStore sender = TestStore.builder().prefix(prefix).build();
				App first = new App(prefix, false, 1, 2, handlers);
				App second = new App(prefix, false, 1, 2, handlers)) {
			long before = evalshaCalls(sender.redis());
			List<String> ids = send(sender, 1, 20);
			await().atMost(Duration.ofSeconds(20)).until(() -> handlers.done.keySet().containsAll(ids));
			long calls = evalshaCalls(sender.redis()) - before;
			List<Long> gaps = handlers.gaps();
			System.out.println("GroupConcurrencyReviewTests liveness: gaps (ms) " + gaps + ", " + handlers.gapSummary()
					+ ", EVALSHA calls for 20 messages " + calls);
			assertThat(Collections.max(gaps)).as("longest gap in ms, idle check 2000").isLessThan(1000);
		}
	}

	/**
	 * Cost: two instances of concurrency 4, every group at its limit of 1 (each group's
	 * first handler blocks), further messages of the groups waiting. Idle consumers do
	 * not spin: the script calls Redis serves in two seconds are those of the idle checks
	 * and the brokers, not claims in a loop; one send to a parked group costs a few
	 * claims.
	 */
	@Test
	void idleConsumersDoNotSpinWhileEveryGroupIsParked() {
		String prefix = TestStore.uniquePrefix();
		CountDownLatch release = new CountDownLatch(1);
		Handlers handlers = new Handlers(0);
		handlers.blockOn = release;
		try (TestStore sender = TestStore.builder().prefix(prefix).build();
				App first = new App(prefix, false, 1, 4, handlers);
				App second = new App(prefix, false, 1, 4, handlers)) {
			send(sender, 3, 5);
			await().atMost(Duration.ofSeconds(10)).until(() -> handlers.started.size() == 3);
			await().pollDelay(Duration.ofMillis(500)).until(() -> true);
			long before = evalshaCalls(sender.redis());
			await().pollDelay(Duration.ofSeconds(2)).until(() -> true);
			long idle = evalshaCalls(sender.redis()) - before;
			before = evalshaCalls(sender.redis());
			for (int i = 0; i < 10; i++) {
				sender.template().send(DelayMessage.builder(TOPIC, "body").id("g0-extra" + i).group("g0").build());
			}
			await().pollDelay(Duration.ofMillis(500)).until(() -> true);
			long perTenSends = evalshaCalls(sender.redis()) - before;
			System.out.println("GroupConcurrencyReviewTests parked: " + idle + " EVALSHA in 2 s idle, " + perTenSends
					+ " for 10 sends to a parked group (10 of them the sends)");
			assertThat(handlers.started).hasSize(3);
			release.countDown();
			assertThat(idle).as("script calls in 2 s with every group parked").isLessThan(40);
		}
	}

	private static List<String> send(TestStore sender, int groups, int each) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < each; i++) {
			for (int g = 0; g < groups; g++) {
				String id = "g" + g + "-" + i;
				sender.template().send(DelayMessage.builder(TOPIC, "body").id(id).group("g" + g).build());
				ids.add(id);
			}
		}
		return ids;
	}

	/** The handlers of every instance: what runs at once per group, and when. */
	static final class Handlers {

		final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

		final Map<String, Integer> most = new ConcurrentHashMap<>();

		final Map<String, Long> done = new ConcurrentHashMap<>();

		final List<String> started = new CopyOnWriteArrayList<>();

		/** Per group: {start ns, end ns} of each handling, in start order. */
		final Map<String, List<long[]>> spans = new ConcurrentHashMap<>();

		final Map<String, Integer> attempts = new ConcurrentHashMap<>();

		private final long workMillis;

		volatile CountDownLatch blockOn;

		Handlers(long workMillis) {
			this.workMillis = workMillis;
		}

		void handle(String id) {
			String group = id.substring(0, id.indexOf('-'));
			long start = System.nanoTime();
			this.started.add(id);
			int now = this.running.computeIfAbsent(group, (g) -> new AtomicInteger()).incrementAndGet();
			this.most.merge(group, now, Math::max);
			try {
				CountDownLatch latch = this.blockOn;
				if (latch != null) {
					Interruptibly.await(latch);
				}
				Interruptibly.sleep(this.workMillis);
				int attempt = this.attempts.merge(id, 1, Integer::sum);
				if (attempt == 1 && id.hashCode() % 5 == 0 && this.workMillis == 20) {
					throw new IllegalStateException("first attempt of " + id + " fails");
				}
				this.done.putIfAbsent(id, System.nanoTime());
			}
			finally {
				this.running.get(group).decrementAndGet();
				this.spans.computeIfAbsent(group, (g) -> new CopyOnWriteArrayList<>())
					.add(new long[] { start, System.nanoTime() });
			}
		}

		/** Gaps in ms between one handling's end and the next start of its group. */
		List<Long> gaps() {
			List<Long> gaps = new ArrayList<>();
			for (List<long[]> group : this.spans.values()) {
				List<long[]> sorted = new ArrayList<>(group);
				sorted.sort((a, b) -> Long.compare(a[0], b[0]));
				for (int i = 1; i < sorted.size(); i++) {
					gaps.add((sorted.get(i)[0] - sorted.get(i - 1)[1]) / 1_000_000);
				}
			}
			return gaps;
		}

		String gapSummary() {
			List<Long> gaps = gaps();
			if (gaps.isEmpty()) {
				return "none";
			}
			Collections.sort(gaps);
			return "median " + gaps.get(gaps.size() / 2) + ", p90 " + gaps.get(gaps.size() * 9 / 10) + ", max "
					+ gaps.get(gaps.size() - 1) + " of " + gaps.size();
		}

	}

	/** One application instance: a runtime with one listener with a group concurrency. */
	static final class App implements AutoCloseable {

		final TestStore store;

		final DelayQueueRuntime runtime;

		private final Handlers handlers;

		App(String prefix, boolean behindProxy, int groupConcurrency, int concurrency, Handlers handlers) {
			this.handlers = handlers;
			TestStore.Builder builder = TestStore.builder().prefix(prefix);
			this.store = (behindProxy ? builder.behindProxy() : builder).build();
			JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
			DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
			Method method = ReflectionUtils.findMethod(App.class, "on", Delivery.class);
			ListenerSettings settings = new ListenerSettings(concurrency, 4, 5, Duration.ofSeconds(30),
					new RetryBackoff(Duration.ofMillis(100), 1.0, Duration.ofMillis(100)), Duration.ofSeconds(2),
					Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1))
				.withGroupConcurrency(groupConcurrency);
			registry.register(new DelayListenerEndpoint(TOPIC, this, method, settings));
			this.runtime = new DelayQueueRuntime(this.store.store(), converter,
					new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
			this.runtime.start();
		}

		void on(Delivery<String> delivery) {
			this.handlers.handle(delivery.id());
		}

		@Override
		public void close() {
			this.runtime.stop();
			this.store.close();
		}

	}

	static List<ClaimedMessage> claim(RedisMessageStore store, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, 0, MINUTE, null, groupConcurrency)
			.messages();
	}

}
