package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.FailingClaims;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Pausing and resuming a topic's listener in one application
 * ({@link DelayQueueRuntime#pause(String)}), and the listener states the operations
 * endpoint and the health check report.
 */
class ListenerPauseTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
		.withBean(NoteListener.class)
		.withPropertyValues("delay-queue.listener.idle-check-interval=500ms", "delay-queue.broker.max-sleep=500ms");

	@Test
	void pausedListenerClaimsNothingUntilItIsResumed() {
		this.runner.run((context) -> {
			DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
			NoteListener listener = context.getBean(NoteListener.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			assertThat(runtime.getListenerStates()).containsExactly(Map.entry("notes", ListenerState.RUNNING));

			assertThat(runtime.pause("notes")).isTrue();
			assertThat(runtime.getListenerStates()).containsEntry("notes", ListenerState.PAUSED);
			context.getBean(DelayQueueTemplate.class).send("notes", "while paused", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10)).until(() -> store.stats("notes").ready() == 1);
			await().during(Duration.ofSeconds(1))
				.atMost(Duration.ofSeconds(3))
				.until(() -> listener.received.isEmpty() && store.stats("notes").ready() == 1);

			assertThat(runtime.resume("notes")).isTrue();
			assertThat(runtime.getListenerStates()).containsEntry("notes", ListenerState.RUNNING);
			await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.contains("while paused"));
		});
	}

	@Test
	void pauseReturnsOnceTheRunningHandlerHasFinished() {
		this.runner.run((context) -> {
			DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
			NoteListener listener = context.getBean(NoteListener.class);
			listener.block = new CountDownLatch(1);
			context.getBean(DelayQueueTemplate.class).send("notes", "slow", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10)).until(() -> listener.started.contains("slow"));

			CompletableFuture<Boolean> pause = CompletableFuture.supplyAsync(() -> runtime.pause("notes"));
			await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !pause.isDone());
			listener.block.countDown();
			assertThat(pause.get(10, TimeUnit.SECONDS)).isTrue();

			assertThat(listener.received).containsExactly("slow");
			assertThat(context.getBean(RedisMessageStore.class).stats("notes")).satisfies((stats) -> {
				assertThat(stats.inFlight()).isZero();
				assertThat(stats.ready()).isZero();
			});
		});
	}

	/**
	 * Before, a resume while the pause still waited for the paused listener's handlers
	 * started a new listener at once, whose handlers ran beside the old ones: more than
	 * the topic's concurrency at once. Now the resume returns at once and takes effect
	 * when the pause has finished.
	 */
	@Test
	void aResumeWhileThePauseWaitsForHandlersStartsTheListenerOnceThePauseHasFinished() {
		ConcurrentListener listener = new ConcurrentListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(ConcurrentListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.concurrency=1", "delay-queue.listener.shutdown-timeout=10s",
					"delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				template.send(DelayMessage.builder("concurrent", "m1").id("m1").build());
				await().atMost(Duration.ofSeconds(20)).until(() -> listener.deliveries.size() == 1);
				CompletableFuture<Boolean> paused = CompletableFuture.supplyAsync(() -> runtime.pause("concurrent"));
				await().atMost(Duration.ofSeconds(20))
					.until(() -> runtime.getListenerStates().get("concurrent") == ListenerState.PAUSED);
				assertThat(runtime.resume("concurrent")).isTrue();
				assertThat(runtime.resume("concurrent")).as("asked already").isFalse();
				template.send(DelayMessage.builder("concurrent", "m2").id("m2").build());
				// m2 is handled once m1's handler returns; before, at once, beside it.
				await().during(Duration.ofSeconds(1))
					.atMost(Duration.ofSeconds(20))
					.until(() -> listener.deliveries.size() == 1 && listener.mostAtOnce.get() == 1);
				assertThat(runtime.getListenerStates()).containsEntry("concurrent", ListenerState.PAUSED);
				listener.release.countDown();
				assertThat(paused.get(20, TimeUnit.SECONDS)).isTrue();
				await().atMost(Duration.ofSeconds(20)).until(() -> listener.deliveries.size() == 2);
				assertThat(listener.deliveries).containsExactly("m1", "m2");
				assertThat(listener.mostAtOnce).as("handlers of the topic at once, with concurrency 1").hasValue(1);
				assertThat(runtime.getListenerStates()).containsEntry("concurrent", ListenerState.RUNNING);
			});
	}

	@Test
	void pausingAPausedListenerOrResumingARunningOneChangesNothing() {
		this.runner.run((context) -> {
			DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
			assertThat(runtime.resume("notes")).isFalse();
			assertThat(runtime.pause("notes")).isTrue();
			assertThat(runtime.pause("notes")).isFalse();
			assertThat(runtime.resume("notes")).isTrue();
			assertThat(runtime.resume("notes")).isFalse();
			assertThat(runtime.getListenerStates()).containsEntry("notes", ListenerState.RUNNING);
		});
	}

	@Test
	void pausingATopicWithoutAListenerInThisApplicationIsRefused() {
		this.runner.run((context) -> {
			DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
			assertThatIllegalArgumentException().isThrownBy(() -> runtime.pause("other"))
				.withMessageContaining("'other'");
			assertThatIllegalArgumentException().isThrownBy(() -> runtime.resume("other"));
		});
	}

	@Test
	void listenersStartedAgainWithTheRegistryAreNoLongerPaused() {
		this.runner.run((context) -> {
			DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
			runtime.pause("notes");
			runtime.stop();
			assertThat(runtime.getListenerStates()).containsEntry("notes", ListenerState.STOPPED);
			runtime.start();
			assertThat(runtime.getListenerStates()).containsEntry("notes", ListenerState.RUNNING);
			context.getBean(DelayQueueTemplate.class).send("notes", "after restart", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(NoteListener.class).received.contains("after restart"));
		});
	}

	@Test
	void listenerThatStoppedOnAnErrorIsReportedStopped() {
		this.runner.withBean(FailingClaims.class).run((context) -> {
			DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
			context.getBean(FailingClaims.class).failFromNowOn();
			context.getBean(DelayQueueTemplate.class).send("notes", "wakes the listener", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> runtime.getListenerStates().get("notes") == ListenerState.STOPPED);
		});
	}

	static class ConcurrentListener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		final AtomicInteger running = new AtomicInteger();

		final AtomicInteger mostAtOnce = new AtomicInteger();

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "concurrent")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.mostAtOnce.accumulateAndGet(this.running.incrementAndGet(), Math::max);
			try {
				this.deliveries.add(delivery.id());
				this.release.await(1, TimeUnit.MINUTES);
			}
			finally {
				this.running.decrementAndGet();
			}
		}

	}

	static class NoteListener {

		final List<String> started = new CopyOnWriteArrayList<>();

		final List<String> received = new CopyOnWriteArrayList<>();

		volatile CountDownLatch block = new CountDownLatch(0);

		@DelayListener(topic = "notes")
		void on(String payload) throws InterruptedException {
			this.started.add(payload);
			this.block.await(10, TimeUnit.SECONDS);
			this.received.add(payload);
		}

	}

}
