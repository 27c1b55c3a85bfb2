package io.github.delayqueue.autoconfigure;

import java.io.IOException;
import java.net.ConnectException;
import java.util.Arrays;

import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * What a new user reads when the start goes wrong: a start without Redis says what will
 * happen, and a bad schedule's failure shows its settings, not an object's identity.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupMessagesTests {

	@Test
	void aStartWhoseCountCheckFindsNoRedisSaysThatItFailsNextIfRedisRefuses(CapturedOutput output) throws IOException {
		int port = RedisConnectionFailureAnalyzerTests.closedPort();
		SpringApplication application = new SpringApplication(
				RedisConnectionFailureAnalyzerTests.ListenerApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException()
			.isThrownBy(
					() -> application.run("--spring.data.redis.port=" + port, "--delay-queue.producer.send-timeout=1s"))
			.withRootCauseInstanceOf(ConnectException.class);
		assertThat(output).contains("Topic 'notes': could not compare its number of partitions with the one in Redis")
			.contains("The start goes on, and the comparison is made again in the background once Redis answers;"
					+ " but if Redis refuses connections, the start fails next, when the listeners subscribe to their"
					+ " wake-up signals")
			.contains("APPLICATION FAILED TO START")
			.doesNotContain("trying again in the background until Redis answers");
	}

	@Test
	void anInvalidScheduleIsShownByItsSettingsInTheBindFailure(CapturedOutput output) {
		SpringApplication application = new SpringApplication(
				RedisConnectionFailureAnalyzerTests.ListenerApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		String[] args = Arrays.stream(TestRedis.shared().springProperties())
			.map((property) -> "--" + property)
			.toArray(String[]::new);
		String[] all = new String[args.length + 2];
		System.arraycopy(args, 0, all, 0, args.length);
		all[args.length] = "--delay-queue.schedules.broken.topic=notes";
		all[args.length + 1] = "--delay-queue.schedules.broken.cron=61 * * * * *";
		assertThatException().isThrownBy(() -> application.run(all));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Property: delay-queue.schedules[broken]")
			.contains("Value: \"topic='notes', cron='61 * * * * *', fixed-rate=null, zone=null, payload='',"
					+ " misfire=FIRE_ONCE\"")
			.contains("delay-queue.schedules.broken: Schedule 'broken': Invalid cron expression")
			.doesNotContain("ScheduleProperties@");
	}

}
