package io.github.delayqueue.review;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.runtime.consumer.HandBacks;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.time.RetryBackoff;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ReflectionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of commit 3ba4691: a hand-back ({@code release.lua}, sent in full)
 * that fails is tried again by {@code StoreCalls.RETRIES}. Real Redis, behind a
 * {@link FaultyRedisProxy} where a reply must be held or dropped.
 */
@OnOneServerVersion
class HandBackRetryReviewTests {

	private static final String TOPIC = "orders";

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	private final Logger logger = (Logger) LoggerFactory.getLogger("io.github.delayqueue.runtime.consumer.Settlement");

	private final Warnings warnings = new Warnings();

	@BeforeEach
	void captureWarnings() {
		this.warnings.start();
		this.logger.addAppender(this.warnings);
	}

	@AfterEach
	void stopScheduler() {
		this.logger.detachAppender(this.warnings);
		this.scheduler.shutdownNow();
	}

	@Test
	void aRetryOfAHandBackThatRanDoesNotTakeTheMessagesFromTheConsumerThatClaimedThemSince() {
		try (TestStore slow = TestStore.builder().behindProxy().sendTimeout(Duration.ofMillis(500)).build();
				TestStore other = TestStore.builder().prefix(slow.prefix()).build()) {
			List<ClaimedMessage> claimed = sendAndClaim(slow, 2);
			// release.lua runs, its reply comes after the call's timeout: the retry
			// follows 100 ms later.
			slow.proxy().delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"), Duration.ofMillis(1500));

			CompletableFuture<Void> handedBack = HandBacks.handBack(TOPIC, slow.store().topic(TOPIC), claimed,
					this.scheduler, false);
			List<ClaimedMessage> taken = new java.util.ArrayList<>();
			await().atMost(Duration.ofMillis(550))
				.pollInterval(Duration.ofMillis(5))
				.until(() -> taken.addAll(Transitions.claim(other.store(), TOPIC, 10, Duration.ofMinutes(1)))
						&& taken.size() == 2);
			handedBack.orTimeout(10, TimeUnit.SECONDS).join();

			assertThat(slow.proxy().forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL")))
				.as("release calls forwarded (the claim went direct)")
				.isGreaterThanOrEqualTo(2);
			assertThat(Transitions.release(other.store(), TOPIC, ids(taken), tokens(taken)))
				.as("the other consumer still holds both leases")
				.containsExactly(true, true);
			assertThat(this.warnings.all).as("warnings").isEmpty();
		}
	}

	@Test
	void unfinishedMessagesHandedBackByATryWhoseReplyCameTooLateAreStillNamedInAWarning() {
		try (TestStore slow = TestStore.builder().behindProxy().sendTimeout(Duration.ofMillis(300)).build()) {
			List<ClaimedMessage> claimed = sendAndClaim(slow, 2);
			slow.proxy().delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"), Duration.ofMillis(600));

			HandBacks.handBack(TOPIC, slow.store().topic(TOPIC), claimed, this.scheduler, true)
				.orTimeout(10, TimeUnit.SECONDS)
				.join();

			// Before 3ba4691 the failed try said "unless Redis ran it"; the retry finds
			// no lease and, without the fix, nothing named the cut-off messages.
			assertThat(this.warnings.all).as("warnings")
				.singleElement()
				.asString()
				.contains(ids(claimed))
				.contains("no answer")
				.doesNotContain("when their lease expires");
		}
	}

	@Test
	void aHandBackWhoseReplyIsDroppedLeavesEachMessageReadyExactlyOnce() {
		try (TestStore slow = TestStore.builder().behindProxy().sendTimeout(Duration.ofMillis(500)).build();
				TestStore other = TestStore.builder().prefix(slow.prefix()).build()) {
			List<ClaimedMessage> claimed = sendAndClaim(slow, 3);
			FaultyRedisProxy.Fault dropped = slow.proxy().dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));

			HandBacks.handBack(TOPIC, slow.store().topic(TOPIC), claimed, this.scheduler, false)
				.orTimeout(10, TimeUnit.SECONDS)
				.join();

			assertThat(dropped.hasFired()).isTrue();
			List<ClaimedMessage> again = Transitions.claim(other.store(), TOPIC, 10, Duration.ofMinutes(1));
			assertThat(ids(again)).containsExactlyInAnyOrderElementsOf(ids(claimed));
			assertThat(Transitions.claim(other.store(), TOPIC, 10, Duration.ofMinutes(1))).isEmpty();
			assertThat(this.warnings.all).as("warnings").isEmpty();
		}
	}

	@Test
	void aHandBackToARedisThatAnswersNothingEndsAfterItsThreeTriesWithOneWarningAndTheHeldTriesRunOnceItAnswers() {
		try (TestStore slow = TestStore.builder().behindProxy().sendTimeout(Duration.ofMillis(200)).build();
				TestStore other = TestStore.builder().prefix(slow.prefix()).build()) {
			List<ClaimedMessage> claimed = sendAndClaim(slow, 2);
			slow.proxy().pause();
			long started = System.nanoTime();

			HandBacks.handBack(TOPIC, slow.store().topic(TOPIC), claimed, this.scheduler, false)
				.orTimeout(10, TimeUnit.SECONDS)
				.join();

			long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
			// Three tries of 200 ms and the waits of 100 and 200 ms: the hand-back's own
			// end, past a 200 ms shutdown timeout; the stop itself returns by its
			// deadline
			// (ConsumerStop.await) and leaves the retries running behind it.
			assertThat(tookMillis).as("ms the hand-back took").isBetween(800L, 3000L);
			assertThat(this.warnings.all).as("warnings")
				.singleElement()
				.asString()
				.contains("no answer to the hand-back");
			// The tries were written and held on the wire: they run once Redis answers
			// again, and the messages are ready exactly once.
			slow.proxy().resume();
			List<ClaimedMessage> again = new java.util.ArrayList<>();
			await().atMost(Duration.ofSeconds(3))
				.until(() -> again.addAll(Transitions.claim(other.store(), TOPIC, 10, Duration.ofMinutes(1)))
						&& again.size() >= 2);
			assertThat(ids(again)).containsExactlyInAnyOrderElementsOf(ids(claimed));
			assertThat(Transitions.claim(other.store(), TOPIC, 10, Duration.ofMinutes(1))).isEmpty();
		}
	}

	@Test
	void aRetryAfterTheStoreClosedEndsTheHandBackWithoutAnExceptionOrAThreadLeftBehind() {
		CompletableFuture<Void> handedBack;
		int threadsBefore;
		List<ClaimedMessage> claimed;
		try (TestStore slow = TestStore.builder().behindProxy().sendTimeout(Duration.ofMillis(200)).build()) {
			claimed = sendAndClaim(slow, 2);
			threadsBefore = Thread.activeCount();
			slow.proxy().pause();
			handedBack = HandBacks.handBack(TOPIC, slow.store().topic(TOPIC), claimed, this.scheduler, false);
			// The first try fails at 200 ms; the store closes while the retry waits.
			await().pollDelay(Duration.ofMillis(250)).until(() -> true);
		}
		handedBack.orTimeout(5, TimeUnit.SECONDS).join();
		assertThat(handedBack).isCompleted();
		// Only this test's: the retries of an earlier test's stop outlive its store too.
		String id = claimed.get(0).id();
		assertThat(this.warnings.all.stream().filter((warning) -> warning.contains(id))).as("warnings")
			.singleElement()
			.asString()
			.contains("no answer to the hand-back")
			.contains("LettuceConnectionFactory was destroyed");
		await().atMost(Duration.ofSeconds(3))
			.untilAsserted(() -> assertThat(Thread.activeCount()).isLessThanOrEqualTo(threadsBefore + 2));
	}

	@ParameterizedTest
	@CsvSource({ "200, silent", "1000, silent", "3000, silent", "200, down", "1000, down", "3000, down" })
	void aStopWithItsHandBackUnansweredTakesNoLongerThanItsShutdownTimeout(long timeoutMillis, String redis)
			throws Exception {
		try (StopApp app = new StopApp(Duration.ofMillis(timeoutMillis))) {
			for (int i = 0; i < 2; i++) {
				app.other.template().send(TOPIC, "body " + i, Duration.ZERO);
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> app.started.getCount() == 0);
			if (redis.equals("down")) {
				app.store.proxy().cutAll();
			}
			app.store.proxy().pause();
			long started = System.nanoTime();

			app.runtime.stop();

			long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
			System.out.println("HandBackRetryReviewTests: stop with Redis " + redis + ", shutdown timeout "
					+ timeoutMillis + " ms, took " + tookMillis + " ms");
			assertThat(tookMillis).as("ms the stop took").isLessThanOrEqualTo(timeoutMillis + 300);
		}
	}

	@Test
	void aPauseAndAQuickResumeWhileTheHandBackIsTriedAgainDeliverNoMessageTwiceAtOnce() throws Exception {
		try (StopApp app = new StopApp(Duration.ofMillis(200))) {
			List<String> ids = new java.util.ArrayList<>();
			for (int i = 0; i < 2; i++) {
				ids.add(app.other.template().send(TOPIC, "body " + i, Duration.ZERO).id());
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> app.started.getCount() == 0);
			// The hand-back at the pause runs, its reply (and those after it) comes
			// after its 500 ms timeout: the retry is sent while the listener resumed.
			FaultyRedisProxy.Fault held = app.store.proxy()
				.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVAL", ids.get(0)),
						Duration.ofMillis(1200));

			app.runtime.pause(TOPIC);
			app.runtime.resume(TOPIC);

			assertThat(held.awaitFired(Duration.ofSeconds(5))).isTrue();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries.getOrDefault(id, 0) >= 2));
			await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
			System.out.println("HandBackRetryReviewTests: calls in full "
					+ app.store.proxy().forwardedCount(FaultyRedisProxy.named("EVAL")) + ", deliveries "
					+ app.deliveries + ", warnings " + this.warnings.all);
			// The retry ran and found the leases gone (the resumed listener held them).
			assertThat(this.warnings.all).as("warnings")
				.anySatisfy((warning) -> assertThat(warning).contains("a try of their hand-back got no answer"));
			assertThat(app.mostAtOnce).as("most deliveries of one message at once")
				.containsOnlyKeys(ids)
				.containsValues(1)
				.doesNotContainValue(2);
			assertThat(app.deliveries).as("deliveries").containsEntry(ids.get(0), 2).containsEntry(ids.get(1), 2);
		}
	}

	/**
	 * A listener of the topic whose two handlers wait until interrupted, behind a proxy.
	 */
	static final class StopApp implements AutoCloseable {

		final TestStore store;

		final TestStore other;

		final DelayQueueRuntime runtime;

		final CountDownLatch started = new CountDownLatch(2);

		StopApp(Duration shutdownTimeout) {
			String prefix = TestStore.uniquePrefix();
			this.store = TestStore.builder().prefix(prefix).behindProxy().sendTimeout(Duration.ofMillis(500)).build();
			this.other = TestStore.builder().prefix(prefix).build();
			JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
			DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
			Method method = ReflectionUtils.findMethod(StopApp.class, "on", Delivery.class);
			registry.register(new DelayListenerEndpoint(TOPIC, this, method,
					new ListenerSettings(2, 0, 3, Duration.ofSeconds(30),
							new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), Duration.ofSeconds(1),
							shutdownTimeout, Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1))));
			this.runtime = new DelayQueueRuntime(this.store.store(), converter,
					new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
			this.runtime.start();
		}

		final Map<String, Integer> deliveries = new ConcurrentHashMap<>();

		final Map<String, Integer> atOnce = new ConcurrentHashMap<>();

		final Map<String, Integer> mostAtOnce = new ConcurrentHashMap<>();

		void on(Delivery<String> delivery) throws InterruptedException {
			String id = delivery.id();
			this.deliveries.merge(id, 1, Integer::sum);
			int now = this.atOnce.merge(id, 1, Integer::sum);
			this.mostAtOnce.merge(id, now, Math::max);
			try {
				this.started.countDown();
				if (this.deliveries.get(id) == 1) {
					new CountDownLatch(1).await();
				}
			}
			finally {
				this.atOnce.merge(id, -1, Integer::sum);
			}
		}

		@Override
		public void close() {
			this.runtime.stop();
			this.store.proxy().resume();
			this.other.close();
			this.store.close();
		}

	}

	/** The warnings logged while it is attached. */
	static class Warnings extends AppenderBase<ILoggingEvent> {

		final List<String> all = new CopyOnWriteArrayList<>();

		@Override
		protected void append(ILoggingEvent event) {
			if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
				this.all.add(event.getFormattedMessage());
			}
		}

	}

	private static List<ClaimedMessage> sendAndClaim(TestStore store, int count) {
		for (int i = 0; i < count; i++) {
			store.template().send(TOPIC, "body " + i, Duration.ZERO);
		}
		RedisMessageStore direct = store.store();
		Transitions.promote(direct, TOPIC, 10);
		List<ClaimedMessage> claimed = Transitions.claim(direct, TOPIC, 10, Duration.ofMinutes(1));
		assertThat(claimed).hasSize(count);
		return claimed;
	}

	private static List<String> ids(List<ClaimedMessage> messages) {
		return messages.stream().map(ClaimedMessage::id).toList();
	}

	private static List<String> tokens(List<ClaimedMessage> messages) {
		return messages.stream().map(ClaimedMessage::leaseToken).toList();
	}

}
