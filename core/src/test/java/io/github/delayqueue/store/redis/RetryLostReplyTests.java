package io.github.delayqueue.store.redis;

import java.time.Duration;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A retry (with its error) and a postpone whose replies are lost are replayed without
 * counting an attempt twice or losing the error.
 */
class RetryLostReplyTests {

	@Test
	void retryAndPostponeReplayedAfterALostReplyCountOnceAndKeepTheError() {
		try (TestStore fixture = TestStore.builder().behindProxy().build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			template.send(DelayMessage.builder("lossy", "x").id("l-1").build());
			Transitions.promote(store, "lossy", 10);
			ClaimedMessage first = Transitions.claim(store, "lossy", 1, Duration.ofMinutes(1)).get(0);
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
			retryLosingTheReply(
					() -> Transitions.retry(store, "lossy", "l-1", first.leaseToken(), Duration.ZERO, "boom one"));
			assertThat(fault.hasFired()).isTrue();
			Transitions.promote(store, "lossy", 10);
			ClaimedMessage second = Transitions.claim(store, "lossy", 1, Duration.ofMinutes(1)).get(0);
			StoredMessage message = MessageFormat.decode("l-1", second.stored());
			assertThat(message.attempts()).isEqualTo(1);
			assertThat(message.headers().get(MessageFormat.ERROR_HEADER)).isEqualTo("boom one");
			proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
			retryLosingTheReply(() -> Transitions.postpone(store, "lossy", "l-1", second.leaseToken(), Duration.ZERO));
			Transitions.promote(store, "lossy", 10);
			ClaimedMessage third = Transitions.claim(store, "lossy", 1, Duration.ofMinutes(1)).get(0);
			StoredMessage postponed = MessageFormat.decode("l-1", third.stored());
			assertThat(postponed.attempts()).isEqualTo(1);
			assertThat(postponed.headers().get(MessageFormat.ERROR_HEADER)).isEqualTo("boom one");
		}
	}

	/** A call whose reply is dropped: the client sends it again, or gives up. */
	private static void retryLosingTheReply(Runnable call) {
		try {
			call.run();
		}
		catch (RuntimeException ex) {
			// Given up: what Redis ran is checked next.
		}
	}

}
