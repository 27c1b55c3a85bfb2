package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * Scripts read the Redis clock and then write. Redis 6.2 with
 * {@code lua-replicate-commands no} refuses that unless the script asks for its effects
 * to be replicated; Redis 7 always does, and has no such setting. Runs on whichever Redis
 * the suite runs on (the build runs it on both).
 */
@RedisVersionDependent
class ScriptReplicationTests {

	@Test
	void scriptsWorkOnARedisThatReplicatesScriptsVerbatim() {
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), server.springProperties()).run((context) -> {
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				try {
					redis.execute((RedisCallback<Void>) (connection) -> {
						connection.serverCommands().setConfig("lua-replicate-commands", "no");
						return null;
					});
				}
				catch (DataAccessException ex) {
					abort("Redis " + server.version()
							+ " always replicates script effects (no lua-replicate-commands)");
				}
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				template.send(DelayMessage.builder("jobs", "x").id("m1").delay(Duration.ZERO).build());
				assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).moved()).isEqualTo(1);
				ClaimedMessage claimed = Transitions.claim(store, "jobs", 1, Duration.ofMinutes(1)).get(0);
				assertThat(Transitions.retry(store, "jobs", "m1", claimed.leaseToken(), Duration.ZERO, null))
					.isPositive();
				assertThat(store.reschedule("jobs", "m1", Duration.ofMinutes(1))).isPositive();
				assertThat(store.stats("jobs").scheduled()).isEqualTo(1);
				assertThat(template.sendAll(List.of(DelayMessage.builder("jobs", "y").build()))).hasSize(1);
			});
		}
	}

}
