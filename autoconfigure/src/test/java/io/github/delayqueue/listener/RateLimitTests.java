package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@code delay-queue.topics.<topic>.rate-limit.*}: two applications share one limit, held
 * in any sliding window of the period (measured after a warm-up), with every message
 * delivered once, on its first attempt, and messages held back in due order; bad values
 * fail startup.
 */
class RateLimitTests {

	private static final int LIMIT = 20;

	private static final Duration PERIOD = Duration.ofSeconds(1);

	/**
	 * What the window bound may lose to the JVM's clock: starts are measured here, the
	 * window is kept on the Redis clock at claim time.
	 */
	private static final Duration CLOCK_TOLERANCE = Duration.ofMillis(50);

	private static final int MESSAGES = 60;

	@Test
	void twoApplicationsTogetherStartNoMoreThanTheLimitInAnyWindowOfThePeriod() {
		Deliveries deliveries = new Deliveries();
		ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(Deliveries.class, () -> deliveries)
			.withBean(PartnerListener.class)
			.withPropertyValues("delay-queue.listener.concurrency=4", "delay-queue.listener.prefetch=8",
					"delay-queue.topics.partner.rate-limit.limit=" + LIMIT,
					"delay-queue.topics.partner.rate-limit.period=" + PERIOD.toMillis() + "ms");
		runner.run((first) -> runner.run((second) -> {
			DelayQueueTemplate template = first.getBean(DelayQueueTemplate.class);
			// A first window's worth warms both applications up: the first deliveries
			// of a JVM load classes and start threads, which may start them later after
			// their claim than the tolerance allows. Only the rest is measured.
			template.sendAll(messages("warm-up", LIMIT));
			await().atMost(Duration.ofSeconds(10)).until(() -> deliveries.starts.size() >= LIMIT);
			template.sendAll(messages("m", MESSAGES));
			await().atMost(Duration.ofSeconds(15)).until(() -> deliveries.starts.size() >= LIMIT + MESSAGES);
			List<Start> all = List.copyOf(deliveries.starts);
			assertThat(all).extracting(Start::id).doesNotHaveDuplicates().hasSize(LIMIT + MESSAGES);
			assertThat(all).extracting(Start::attempt).containsOnly(1);
			assertThat(perInstance(all)).as("deliveries per instance").hasSize(2);
			List<Long> nanos = all.stream()
				.filter((start) -> start.id().startsWith("m"))
				.map(Start::nanos)
				.sorted()
				.toList();
			int busiest = busiestWindow(nanos, PERIOD.minus(CLOCK_TOLERANCE).toNanos());
			double seconds = (nanos.get(nanos.size() - 1) - nanos.get(0)) / 1e9;
			System.out.printf(
					"RATE LIMIT %d per %s over two instances: %d deliveries in %.2f s, at most %d in any window of"
							+ " %d ms; deliveries per instance %s%n",
					LIMIT, PERIOD, MESSAGES, seconds, busiest, PERIOD.minus(CLOCK_TOLERANCE).toMillis(),
					perInstance(all).values());
			assertThat(busiest).isLessThanOrEqualTo(LIMIT);
		}));
	}

	@Test
	void messagesHeldBackByTheLimitComeInDueOrder() {
		Deliveries deliveries = new Deliveries();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(Deliveries.class, () -> deliveries)
			.withBean(PartnerListener.class)
			.withPropertyValues("delay-queue.topics.partner.concurrency=1",
					"delay-queue.topics.partner.rate-limit.limit=4",
					"delay-queue.topics.partner.rate-limit.period=200ms")
			.run((context) -> {
				List<DelayMessage> messages = new ArrayList<>();
				List<String> ids = new ArrayList<>();
				for (int i = 0; i < 14; i++) {
					ids.add("m" + i);
					messages
						.add(DelayMessage.builder("partner", "m" + i).id("m" + i).delay(Duration.ofMillis(i)).build());
				}
				context.getBean(DelayQueueTemplate.class).sendAll(messages);
				await().atMost(Duration.ofSeconds(10)).until(() -> deliveries.starts.size() >= ids.size());
				assertThat(deliveries.starts).extracting(Start::id).containsExactlyElementsOf(ids);
				assertThat(deliveries.starts).extracting(Start::attempt).containsOnly(1);
			});
	}

	@Test
	void thePartitionsOfATopicTogetherStayWithinItsLimit() {
		Deliveries deliveries = new Deliveries();
		Duration period = Duration.ofMillis(500);
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(Deliveries.class, () -> deliveries)
			.withBean(PartnerListener.class)
			.withPropertyValues("delay-queue.topics.partner.partitions=2",
					"delay-queue.topics.partner.rate-limit.limit=10",
					"delay-queue.topics.partner.rate-limit.period=500ms")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				template.sendAll(messages("warm-up", 10));
				await().atMost(Duration.ofSeconds(10)).until(() -> deliveries.starts.size() >= 10);
				template.sendAll(messages("m", 40));
				await().atMost(Duration.ofSeconds(10)).until(() -> deliveries.starts.size() >= 50);
				List<Long> nanos = deliveries.starts.stream()
					.filter((start) -> start.id().startsWith("m"))
					.map(Start::nanos)
					.sorted()
					.toList();
				assertThat(busiestWindow(nanos, period.minus(CLOCK_TOLERANCE).toNanos())).isLessThanOrEqualTo(10);
				assertThat(deliveries.starts).extracting(Start::id).doesNotHaveDuplicates();
			});
	}

	@Test
	void theLimitIsSplitOverThePartitionsWithTheRemainderSoThatTogetherTheyClaimItAllAndNoMore() {
		Deliveries deliveries = new Deliveries();
		Duration period = Duration.ofSeconds(2);
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(Deliveries.class, () -> deliveries)
			.withBean(PartnerListener.class)
			.withBean(WarmUpListener.class)
			.withPropertyValues("delay-queue.topics.partner.partitions=3",
					"delay-queue.topics.partner.rate-limit.limit=5",
					"delay-queue.topics.partner.rate-limit.period=" + period.toMillis() + "ms")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				// Another topic warms the handlers up, so that the first deliveries of
				// the topic start when they are claimed.
				template.send("warm-up", "warm-up", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10)).until(() -> deliveries.starts.size() == 1);
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				runtime.pause("partner");
				// Shares of 5 over 3 partitions: 2, 2 and 1. Two windows' worth in each.
				List<DelayMessage> messages = new ArrayList<>();
				int[] perPartition = { 4, 4, 2 };
				for (int i = 0; messages.size() < 10; i++) {
					String id = "m" + i;
					int partition = TopicPartitions.indexOf(id, 3);
					if (perPartition[partition] > 0) {
						perPartition[partition]--;
						messages.add(DelayMessage.builder("partner", id).id(id).build());
					}
				}
				template.sendAll(messages);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> store.stats("partner").ready() == 10);
				runtime.resume("partner");
				await().atMost(Duration.ofSeconds(20)).until(() -> deliveries.starts.size() >= 11);
				List<Start> partner = deliveries.starts.stream().filter((start) -> start.id().startsWith("m")).toList();
				assertThat(partner).extracting(Start::id).doesNotHaveDuplicates().hasSize(10);
				assertThat(partner).extracting(Start::attempt).containsOnly(1);
				List<Long> nanos = partner.stream().map(Start::nanos).sorted().toList();
				assertThat(Duration.ofNanos(nanos.get(4) - nanos.get(0)))
					.as("the whole limit, 5, is delivered within the first period")
					.isLessThan(period.dividedBy(2));
				assertThat(busiestWindow(nanos, period.minusMillis(200).toNanos())).isLessThanOrEqualTo(5);
			});
	}

	@Test
	void eachPartitionGetsAnEqualShareAndTheFirstOnesOneMoreOfTheRemainder() {
		RateLimit limit = new RateLimit(100, PERIOD);
		assertThat(limit.share(0, 1)).isEqualTo(limit);
		assertThat(List.of(limit.share(0, 3), limit.share(1, 3), limit.share(2, 3))).extracting(RateLimit::limit)
			.containsExactly(34, 33, 33);
		RateLimit five = new RateLimit(5, PERIOD);
		assertThat(List.of(five.share(0, 3), five.share(1, 3), five.share(2, 3))).extracting(RateLimit::limit)
			.containsExactly(2, 2, 1);
		assertThat(five.share(4, 5).limit()).isEqualTo(1);
		assertThatIllegalArgumentException().isThrownBy(() -> five.share(0, 6))
			.withMessageContaining("at least the number of partitions (6), but was 5");
	}

	@Test
	void aLimitBelowThePartitionCountFailsStartupNamingTheTopicTheLimitAndThePartitions() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(Deliveries.class, Deliveries::new)
			.withBean(PartnerListener.class)
			.withPropertyValues("delay-queue.topics.partner.partitions=3",
					"delay-queue.topics.partner.rate-limit.limit=1", "delay-queue.topics.partner.rate-limit.period=1s")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.topics.partner.rate-limit.limit must be at least "
							+ "delay-queue.topics.partner.partitions (3), but was 1")
					.hasMessageContaining("partitions of topic 'partner'");
			});
	}

	@Test
	void badRateLimitsFailStartupNamingTheTopicAndTheProperty() {
		ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix());
		runner
			.withPropertyValues("delay-queue.topics.a.rate-limit.limit=0", "delay-queue.topics.a.rate-limit.period=1s",
					"delay-queue.topics.b.rate-limit.limit=10", "delay-queue.topics.b.rate-limit.period=0s",
					"delay-queue.topics.c.rate-limit.limit=1000001", "delay-queue.topics.c.rate-limit.period=25h",
					"delay-queue.topics[d.e].rate-limit.limit=5")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining(
							"delay-queue.topics.a.rate-limit.limit must be between 1 and 1000000, but was 0")
					.hasMessageContaining(
							"delay-queue.topics.b.rate-limit.period must be between 1ms and 1d, but was 0s")
					.hasMessageContaining("delay-queue.topics.c.rate-limit.limit must be between 1 and 1000000")
					.hasMessageContaining("delay-queue.topics.c.rate-limit.period must be between 1ms and 1d")
					.hasMessageContaining("delay-queue.topics[d.e].rate-limit.period must be set with "
							+ "delay-queue.topics[d.e].rate-limit.limit");
			});
		runner.withPropertyValues("delay-queue.topics.a.rate-limit.period=-1s").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.topics.a.rate-limit.limit must be set with "
						+ "delay-queue.topics.a.rate-limit.period");
		});
	}

	/**
	 * @return the most starts in any window of the given length that opens at a start
	 */
	private static List<DelayMessage> messages(String idPrefix, int count) {
		List<DelayMessage> messages = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			messages.add(DelayMessage.builder("partner", idPrefix + i).id(idPrefix + i).build());
		}
		return messages;
	}

	private static int busiestWindow(List<Long> sortedNanos, long windowNanos) {
		int busiest = 0;
		int end = 0;
		for (int i = 0; i < sortedNanos.size(); i++) {
			while (end < sortedNanos.size() && sortedNanos.get(end) - sortedNanos.get(i) < windowNanos) {
				end++;
			}
			busiest = Math.max(busiest, end - i);
		}
		return busiest;
	}

	private static Map<String, Long> perInstance(Collection<Start> starts) {
		Map<String, Long> counts = new ConcurrentHashMap<>();
		starts.forEach((start) -> counts.merge(start.instance(), 1L, Long::sum));
		return counts;
	}

	record Start(String id, int attempt, String instance, long nanos) {
	}

	static class Deliveries {

		final List<Start> starts = new CopyOnWriteArrayList<>();

	}

	static class WarmUpListener {

		private final Deliveries deliveries;

		WarmUpListener(Deliveries deliveries) {
			this.deliveries = deliveries;
		}

		@DelayListener(topic = "warm-up")
		void call(Delivery<String> delivery) {
			this.deliveries.starts.add(new Start(delivery.id(), delivery.attempt(), "warm-up", System.nanoTime()));
		}

	}

	static class PartnerListener {

		private final Deliveries deliveries;

		private final String instance;

		PartnerListener(Deliveries deliveries) {
			this.deliveries = deliveries;
			this.instance = "instance@" + Integer.toHexString(System.identityHashCode(this));
		}

		@DelayListener(topic = "partner")
		void call(Delivery<String> delivery) {
			this.deliveries.starts.add(new Start(delivery.id(), delivery.attempt(), this.instance, System.nanoTime()));
		}

	}

}
