package io.github.delayqueue.runtime.consumer;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Review 6: an executor that runs the task on the caller's thread (a caller-runs policy,
 * a synchronous executor), and a handler that throws an Error (handlers rethrow
 * VirtualMachineError): the task ran, so it must not be refused too, and its place must
 * be given up once only.
 */
class ConcurrencyLimitedExecutorCallerRunsTests {

	@Test
	void aTaskThatRanOnTheCallersThreadAndThrewAnErrorIsNeitherRefusedNorCountedTwice() throws InterruptedException {
		List<Runnable> refused = new CopyOnWriteArrayList<>();
		ConcurrencyLimitedExecutor<Runnable> handlers = new ConcurrencyLimitedExecutor<>(Runnable::run, 1,
				(task, ex) -> refused.add(task));
		Runnable overflowing = () -> {
			throw new StackOverflowError("handler");
		};
		catchThrowable(() -> handlers.execute(overflowing));
		assertThat(refused).as("a task that ran is handed back as refused too").isEmpty();
		assertThat(handlers.tasks()).as("tasks running or queued").isZero();
		handlers.shutdown();
		assertThat(handlers.awaitTermination(1, TimeUnit.SECONDS)).as("terminated").isTrue();
	}

}
