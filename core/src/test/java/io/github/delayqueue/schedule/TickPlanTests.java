package io.github.delayqueue.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a due schedule sends (a pure policy: no Redis): on-time ticks, the misfire
 * policies after an outage or whenever more than one tick is overdue, and what the log
 * says they sent, the cap on missed ticks, and cron ticks across daylight-saving changes.
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
	void afterAnOutageFireOnceSendsTheLastDueTickSkipSendsNoneAndFireAllSendsEach() {
		Schedule everyMinute = Schedule.cron("m", "t", "0 * * * * *");
		long first = 100 * MINUTE;
		long now = first + 10 * MINUTE + 30_000;
		TickPlan once = TickPlan.of(everyMinute, first, now);
		// 11 due (100..110), all of them missed.
		assertThat(once.ticks()).containsExactly(first + 10 * MINUTE);
		assertThat(once.missed()).isEqualTo(11);
		assertThat(TickPlan.of(everyMinute.withMisfire(MisfirePolicy.SKIP), first, now).ticks()).isEmpty();
		assertThat(TickPlan.of(everyMinute.withMisfire(MisfirePolicy.FIRE_ALL), first, now).ticks()).hasSize(11)
			.startsWith(first)
			.endsWith(first + 10 * MINUTE);
		assertThat(once.next()).isEqualTo(first + 11 * MINUTE);
	}

	@Test
	void moreThanOneOverdueTickIsAMisfireEvenWithinTheMinute() {
		// A 5-second cron back after 40 seconds: 8 ticks due, none a minute late.
		Schedule everyFiveSeconds = Schedule.cron("five", "t", "*/5 * * * * *");
		long first = 100 * MINUTE;
		long now = first + 37_000;
		TickPlan once = TickPlan.of(everyFiveSeconds, first, now);
		assertThat(once.ticks()).containsExactly(first + 35_000);
		assertThat(once.missed()).isEqualTo(8);
		assertThat(once.next()).isEqualTo(first + 40_000);
		assertThat(once.misfireReport(everyFiveSeconds, now)).isEqualTo("Schedule 'five' of topic 't' is behind: 8"
				+ " ticks are due, from " + Instant.ofEpochMilli(first) + " (37s late) to "
				+ Instant.ofEpochMilli(first + 35_000) + ", and more than one overdue tick is a misfire, so its"
				+ " misfire policy FIRE_ONCE applies: it sent one message, for the tick of "
				+ Instant.ofEpochMilli(first + 35_000) + ", and none for the 7 before it; its next tick is "
				+ Instant.ofEpochMilli(first + 40_000) + ".");
		Schedule skip = everyFiveSeconds.withMisfire(MisfirePolicy.SKIP);
		assertThat(TickPlan.of(skip, first, now).misfireReport(skip, now)).contains("8 ticks are due",
				"misfire policy SKIP applies: it sent nothing for them");
		Schedule all = everyFiveSeconds.withMisfire(MisfirePolicy.FIRE_ALL);
		assertThat(TickPlan.of(all, first, now).misfireReport(all, now))
			.contains("misfire policy FIRE_ALL applies: it sent 8 messages, one for each");
	}

	@Test
	void severalTicksDueLessThanTheGraceLateAreAllOnTime() {
		Schedule fast = Schedule.fixedRate("fast", "t", Duration.ofMillis(200));
		long first = 1_000_000;
		TickPlan plan = TickPlan.of(fast, first, first + 500);
		assertThat(plan.ticks()).containsExactly(first, first + 200, first + 400);
		assertThat(plan.missed()).isZero();
		assertThat(plan.misfireReport(fast, first + 500)).isNull();
	}

	@Test
	void oneTickIsOnTimeWithinTheMinuteAndMissedPastIt() {
		Schedule hourly = Schedule.cron("h", "t", "@hourly").withMisfire(MisfirePolicy.SKIP);
		long tick = hourly.nextAfter(0);
		assertThat(TickPlan.of(hourly, tick, tick + 59_000).ticks()).containsExactly(tick);
		TickPlan late = TickPlan.of(hourly, tick, tick + 5 * MINUTE);
		assertThat(late.ticks()).isEmpty();
		assertThat(late.misfireReport(hourly, tick + 5 * MINUTE))
			.contains("missed its tick of " + Instant.ofEpochMilli(tick)
					+ ": it is 5m late, more than 1m, so its misfire policy SKIP applies:" + " it sent nothing for it");
		assertThat(TickPlan.of(hourly.withMisfire(MisfirePolicy.FIRE_ONCE), tick, tick + 5 * MINUTE).ticks())
			.containsExactly(tick);
	}

	@Test
	void fireAllSendsAtMostAThousandMissedTicksTheFirstAndTheLastOfThem() {
		Schedule everySecond = Schedule.fixedRate("s", "t", Duration.ofSeconds(1)).withMisfire(MisfirePolicy.FIRE_ALL);
		long first = 1_000_000;
		long now = first + Duration.ofDays(7).toMillis();
		TickPlan plan = TickPlan.of(everySecond, first, now);
		assertThat(plan.ticks()).hasSize(Schedule.MAX_MISSED_TICKS)
			.startsWith(first, first + 1000)
			.endsWith(first + 998_000, now);
		assertThat(plan.missed()).isGreaterThan(Schedule.MAX_MISSED_TICKS);
		assertThat(plan.next()).isEqualTo(now + 1000);
		assertThat(plan.misfireReport(everySecond, now)).contains("more than 1000 ticks are due",
				"it sent 1000 messages, at most 1000: for the oldest 999 ticks and the last");
	}

	@Test
	void aCronScheduleAMonthBehindIsPlannedWithoutWalkingEveryMissedTick() {
		Schedule everySecond = Schedule.cron("s", "t", "* * * * * *");
		long first = 1_000_000_000_000L;
		long now = first + Duration.ofDays(30).toMillis();
		TickPlan plan = TickPlan.of(everySecond, first, now);
		// A walk over 2.6 million ticks took seconds; this plan walks about a thousand.
		assertThat(plan.ticks()).containsExactly(now);
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

}
