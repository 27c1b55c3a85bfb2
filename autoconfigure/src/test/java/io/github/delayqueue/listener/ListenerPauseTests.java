package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.RedisMessageStore;
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
