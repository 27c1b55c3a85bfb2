package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A claim takes at most 256 messages not yet due (held until their due time): when more
 * fall into the broker's lookahead at once, the listener claims again at once, so that
 * the messages beyond the first 256 are not left for the idle check, seconds late.
 */
class EarlyClaimLimitTests {

	@ParameterizedTest
	@ValueSource(strings = { "20ms", "1s" })
	void moreThan256MessagesDueAtOnceAreAllDeliveredOnTime(String lookahead) {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(TimingListener.class)
			.withPropertyValues("delay-queue.broker.lookahead=" + lookahead)
			.run((context) -> {
				TimingListener listener = context.getBean(TimingListener.class);
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				Instant dueAt = Instant.now().plusSeconds(3);
				List<DelayMessage> messages = IntStream.range(0, 600)
					.mapToObj((i) -> DelayMessage.builder("jobs", "m" + i).dueAt(dueAt).build())
					.toList();
				template.sendAll(messages);
				await().atMost(Duration.ofSeconds(30)).until(() -> listener.lateness.size() == 600);
				Duration worst = listener.lateness.values().stream().max(Duration::compareTo).orElseThrow();
				long lateOverASecond = listener.lateness.values()
					.stream()
					.filter((late) -> late.compareTo(Duration.ofSeconds(1)) > 0)
					.count();
				assertThat(worst).isLessThan(Duration.ofSeconds(1));
			});
	}

	static class TimingListener {

		final Map<String, Duration> lateness = new ConcurrentHashMap<>();

		@DelayListener(topic = "jobs")
		void on(Delivery<String> delivery) {
			this.lateness.put(delivery.id(), Duration.between(delivery.dueAt(), Instant.now()));
		}

	}

}
