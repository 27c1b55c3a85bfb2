package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A pause asked while an earlier one still waits for the handlers returns only once the
 * listener has stopped, and a lookahead over the README's bound fails startup naming the
 * property.
 */
class RepeatedPauseTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	/**
	 * {@code DelayQueueRuntime.pause} "returns when the listener has stopped", so that
	 * the caller (an operator, the endpoint's {@code pause} action) may rely on no
	 * handler of the topic running once it returns. A second pause while the first still
	 * waits for the topic's handlers (say the endpoint's call was repeated after an HTTP
	 * timeout, the first taking up to the 30 s shutdown timeout) returns at once,
	 * "listener was paused already", while the handler still runs, and still may for the
	 * rest of the shutdown timeout.
	 */
	@Test
	void aSecondPauseWhileTheFirstWaitsForTheHandlersReturnsOnlyOnceTheListenerHasStopped() throws Exception {
		CountingListener listener = new CountingListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(CountingListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=10s", "delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("counted", "m1").id("m1").build());
				await().atMost(WAIT).until(() -> listener.running.get() == 1);
				CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> runtime.pause("counted"));
				await().atMost(WAIT).until(() -> runtime.getListenerStates().get("counted") == ListenerState.PAUSED);
				runtime.pause("counted");
				int runningAfterTheSecondPause = listener.running.get();
				listener.release.countDown();
				assertThat(first.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
				assertThat(runningAfterTheSecondPause)
					.as("handlers of the topic running when the second pause returned")
					.isZero();
			});
	}

	/**
	 * {@code delay-queue.broker.lookahead} takes at most a minute, as the README's row
	 * says: a longer one fails startup naming the property (it used to fail later, when
	 * the runtime bean was created).
	 */
	@Test
	void aLookaheadOverAMinuteFailsStartupNamingTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(CountingListener.class, CountingListener::new)
			.withPropertyValues("delay-queue.broker.lookahead=2m")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.broker.lookahead must be 0 to 60s, but was 2m"));
	}

	static class CountingListener {

		final AtomicInteger running = new AtomicInteger();

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "counted")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.running.incrementAndGet();
			try {
				this.release.await(1, TimeUnit.MINUTES);
			}
			finally {
				this.running.decrementAndGet();
			}
		}

	}

	static class LimitedListener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "limited")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.deliveries.add(delivery.id());
			this.attempts.add(delivery.attempt());
			this.release.await(1, TimeUnit.MINUTES);
		}

	}

}
