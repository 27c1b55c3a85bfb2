package io.github.delayqueue.schedule;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.store.ScheduleDefinition;
import io.github.delayqueue.store.ScheduleState;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A schedule and its trigger (no Redis): bad ones are refused naming the problem and the
 * schedule, a zone applies to a cron expression only, and a schedule maps to the store's
 * definition and back as it was.
 */
class ScheduleTests {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	@Test
	void badSchedulesAreRefusedNamingTheScheduleAndTheProblem() {
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> Schedule.cron("a~b", "t", "@daily"))
			.withMessageContaining("must not contain '~'");
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> Schedule.cron("a", "t", "every day"))
			.withMessageContaining("Schedule 'a': Invalid cron expression 'every day'");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.cron("a", "t", "0 0 0 30 2 *"))
			.withMessageContaining("matches no time to come");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.cron("n".repeat(181), "t", "@daily"))
			.withMessageContaining("at most 180 characters");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.fixedRate("a", "t", Duration.ofMillis(10)))
			.withMessageContaining("Schedule 'a': A fixed rate must be at least 100 ms");
	}

	@Test
	void aTriggerChecksItselfWhenCreated() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> new ScheduleTrigger.Cron("61 * * * * *", BERLIN))
			.withMessageStartingWith("Invalid cron expression '61 * * * * *'");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> new ScheduleTrigger.FixedRate(Duration.ofMillis(99)))
			.withMessageStartingWith("A fixed rate must be at least 100 ms");
		assertThat(new ScheduleTrigger.FixedRate(Duration.ofSeconds(5)).nextAfter(1000)).isEqualTo(6000);
	}

	@Test
	void utcIsOneZoneHoweverItIsNamed() {
		assertThat(Schedule.cron("a", "t", "@daily").withZone(ZoneId.of("UTC")))
			.isEqualTo(Schedule.cron("a", "t", "@daily"));
		assertThat(new ScheduleTrigger.Cron("@daily", ZoneId.of("UTC")).zone()).isEqualTo(ZoneOffset.UTC);
	}

	@Test
	void aZoneIsRefusedForAFixedRateNamingTheProblem() {
		Schedule beat = Schedule.fixedRate("beat", "beats", Duration.ofSeconds(1));
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> beat.withZone(BERLIN))
			.withMessageContaining("Schedule 'beat' is at a fixed rate, which no time zone applies to");
	}

	@Test
	void aScheduleIsReadBackFromItsDefinitionAsItWasSaved() {
		Schedule digest = Schedule.cron("digest", "digests", "@daily")
			.withZone(BERLIN)
			.withPayload("{\"kind\":\"daily\"}\nsecond line")
			.withMisfire(MisfirePolicy.SKIP);
		assertThat(ScheduleDefinitions.of(digest)).isEqualTo(new ScheduleDefinition("digests",
				ScheduleDefinition.Kind.CRON, "@daily", "Europe/Berlin", "SKIP", "{\"kind\":\"daily\"}\nsecond line"));
		assertThat(ScheduleDefinitions.schedule("digest", ScheduleDefinitions.of(digest))).isEqualTo(digest);
		Schedule beat = Schedule.fixedRate("beat", "beats", Duration.ofMillis(250));
		assertThat(ScheduleDefinitions.of(beat)).isEqualTo(
				new ScheduleDefinition("beats", ScheduleDefinition.Kind.FIXED_RATE, "PT0.25S", "Z", "FIRE_ONCE", ""));
		assertThat(ScheduleDefinitions.schedule("beat", ScheduleDefinitions.of(beat))).isEqualTo(beat);
	}

	@Test
	void aDefinitionThatIsNoScheduleIsRefusedNamingTheSchedule() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> ScheduleDefinitions.schedule("odd",
					new ScheduleDefinition("t", ScheduleDefinition.Kind.CRON, "@daily", "Mars/Olympus", "SKIP", "")))
			.withMessageStartingWith("Schedule 'odd' has an unreadable definition");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> ScheduleDefinitions.schedule("odd",
					new ScheduleDefinition("t", ScheduleDefinition.Kind.FIXED_RATE, "PT1H", "Z", "SOMETIMES", "")))
			.withMessageStartingWith("Schedule 'odd' has an unreadable definition");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(
					() -> ScheduleDefinitions.schedule(new ScheduleState("later", "t", 0, false, null, true, "0:0:2")))
			.withMessage("Schedule 'later' has an unreadable definition (written by a later version)");
	}

}
