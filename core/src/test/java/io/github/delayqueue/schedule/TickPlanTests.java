package io.github.delayqueue.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

import io.github.delayqueue.core.InvalidMessageException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a due schedule sends (a pure policy: no Redis): on-time ticks, the misfire
 * policies after an outage, the cap on missed ticks, cron ticks across daylight-saving
 * changes, and definitions read back as they were saved.
 */
class TickPlanTests {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	private static final long MINUTE = 60_000;

	@Test
	void aTickSentOnTimeIsSentAloneAndTheNextOneFollows() {
		Schedule everyMinute = Schedule.cron("m", "t", "0 * * * * *");
		long tick = 100 * MINUTE;
		TickPlan plan = TickPlan.of(everyMinute, tick, tick + 1500);
		assertThat(plan.ticks()).containsExactly(tick);
		assertThat(plan.next()).isEqualTo(tick + MINUTE);
		assertThat(plan.missed()).isZero();
	}

	@Test
	void afterAnOutageFireOnceSendsTheLastMissedTickSkipSendsNoneAndFireAllSendsEach() {
		Schedule everyMinute = Schedule.cron("m", "t", "0 * * * * *");
		long first = 100 * MINUTE;
		long now = first + 10 * MINUTE + 30_000;
		TickPlan once = TickPlan.of(everyMinute, first, now);
		// 10 missed (100..109), 110 on time.
		assertThat(once.ticks()).containsExactly(first + 9 * MINUTE, first + 10 * MINUTE);
		assertThat(once.missed()).isEqualTo(9 + 1);
		assertThat(TickPlan.of(everyMinute.withMisfire(MisfirePolicy.SKIP), first, now).ticks())
			.containsExactly(first + 10 * MINUTE);
		assertThat(TickPlan.of(everyMinute.withMisfire(MisfirePolicy.FIRE_ALL), first, now).ticks()).hasSize(11)
			.startsWith(first)
			.endsWith(first + 10 * MINUTE);
		assertThat(once.next()).isEqualTo(first + 11 * MINUTE);
	}

	@Test
	void fireAllSendsAtMostAThousandMissedTicksTheFirstAndTheLastOfThem() {
		Schedule everySecond = Schedule.fixedRate("s", "t", Duration.ofSeconds(1)).withMisfire(MisfirePolicy.FIRE_ALL);
		long first = 1_000_000;
		long now = first + Duration.ofDays(7).toMillis();
		TickPlan plan = TickPlan.of(everySecond, first, now);
		long lastMissed = now - Schedule.MISFIRE_THRESHOLD.toMillis() - 1000;
		assertThat(plan.ticks().subList(0, Schedule.MAX_MISSED_TICKS)).startsWith(first).endsWith(lastMissed);
		// On time: the ticks of the last minute, both ends included.
		assertThat(plan.ticks()).hasSize(Schedule.MAX_MISSED_TICKS + 61);
		assertThat(plan.missed()).isGreaterThan(Schedule.MAX_MISSED_TICKS);
		assertThat(plan.next()).isEqualTo(now + 1000);
	}

	@Test
	void aCronScheduleAMonthBehindIsPlannedWithoutWalkingEveryMissedTick() {
		Schedule everySecond = Schedule.cron("s", "t", "* * * * * *");
		long first = 1_000_000_000_000L;
		long now = first + Duration.ofDays(30).toMillis();
		TickPlan plan = TickPlan.of(everySecond, first, now);
		// A walk over 2.6 million ticks took seconds; this plan walks about a thousand.
		assertThat(plan.ticks()).hasSize(62).startsWith(now - 61_000, now - 60_000).endsWith(now);
		assertThat(plan.missed()).isGreaterThan(Schedule.MAX_MISSED_TICKS);
		assertThat(plan.next()).isEqualTo(now + 1000);
	}

	@Test
	void cronTicksFollowDaylightSavingChangesInTheirZoneAsSpringsCronExpressionDoes() {
		Schedule nightly = Schedule.cron("n", "t", "0 30 2 * * *").withZone(BERLIN);
		// 2026-03-29: 02:30 does not exist in Berlin; Spring's CronExpression has no tick
		// that day.
		long before = ZonedDateTime.of(2026, 3, 28, 12, 0, 0, 0, BERLIN).toInstant().toEpochMilli();
		long spring = nightly.nextAfter(before);
		assertThat(Instant.ofEpochMilli(spring).atZone(BERLIN).toLocalDateTime().toString())
			.isEqualTo("2026-03-30T02:30");
		// 2026-10-25: 02:30 happens twice, and so does the tick, an hour apart.
		long autumnEve = ZonedDateTime.of(2026, 10, 24, 12, 0, 0, 0, BERLIN).toInstant().toEpochMilli();
		long autumn = nightly.nextAfter(autumnEve);
		assertThat(nightly.nextAfter(autumn) - autumn).isEqualTo(Duration.ofHours(1).toMillis());
	}

	@Test
	void aDefinitionIsReadBackAsItWasSaved() {
		Schedule schedule = Schedule.cron("digest", "digests", "@daily")
			.withZone(BERLIN)
			.withPayload("{\"kind\":\"daily\"}\nsecond line")
			.withMisfire(MisfirePolicy.SKIP);
		assertThat(Schedule.parse("digest", schedule.definition())).isEqualTo(schedule);
		Schedule rate = Schedule.fixedRate("beat", "beats", Duration.ofMillis(250));
		assertThat(Schedule.parse("beat", rate.definition())).isEqualTo(rate);
	}

	@Test
	void badSchedulesAreRefusedNamingTheProblem() {
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> Schedule.cron("a~b", "t", "@daily"))
			.withMessageContaining("must not contain '~'");
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> Schedule.cron("a", "t", "every day"))
			.withMessageContaining("invalid cron expression 'every day'");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.cron("a", "t", "0 0 0 30 2 *"))
			.withMessageContaining("matches no time to come");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.cron("n".repeat(181), "t", "@daily"))
			.withMessageContaining("at most 180 characters");
		assertThat(Schedule.cron("a", "t", "@daily").withZone(ZoneId.of("UTC")).definition())
			.isEqualTo(Schedule.cron("a", "t", "@daily").definition());
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.fixedRate("a", "t", Duration.ofMillis(10)))
			.withMessageContaining("at least 100 ms");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> new Schedule("a", "t", "@daily", Duration.ofSeconds(1), BERLIN, "", MisfirePolicy.SKIP))
			.withMessageContaining("not both");
	}

}
