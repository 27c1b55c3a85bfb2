package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.time.ZoneId;

import io.github.delayqueue.schedule.MisfirePolicy;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.schedule.ScheduleDefinitions;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.ScheduleDefinition;
import io.github.delayqueue.store.ScheduleState;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How Redis keeps a schedule (no Redis): definitions stored by earlier versions of this
 * library, of each kind, read back and are written again byte for byte; one that is not a
 * definition is read as unreadable, told apart from one of a later version; a state that
 * is not one is refused.
 */
class ScheduleFormatTests {

	/** A cron definition as version 1 stores it. */
	private static final String STORED_CRON = "1\ndigests\ncron 0 0 2 * * *\nEurope/Berlin\nSKIP\n{\"kind\":\"daily\"}\nsecond line";

	/** A fixed-rate definition as version 1 stores it. */
	private static final String STORED_FIXED_RATE = "1\nbeats\nevery PT0.3S\nZ\nFIRE_ONCE\nbeat";

	@Test
	void aStoredCronDefinitionReadsBackAndIsWrittenAgainByteForByte() {
		ScheduleDefinition definition = ScheduleFormat.decode(STORED_CRON);
		assertThat(definition).isEqualTo(new ScheduleDefinition("digests", ScheduleDefinition.Kind.CRON, "0 0 2 * * *",
				"Europe/Berlin", "SKIP", "{\"kind\":\"daily\"}\nsecond line"));
		Schedule digest = Schedule.cron("digest", "digests", "0 0 2 * * *")
			.withZone(ZoneId.of("Europe/Berlin"))
			.withPayload("{\"kind\":\"daily\"}\nsecond line")
			.withMisfire(MisfirePolicy.SKIP);
		assertThat(ScheduleDefinitions.schedule("digest", definition)).isEqualTo(digest);
		assertThat(ScheduleFormat.encode(ScheduleDefinitions.of(digest))).isEqualTo(STORED_CRON);
	}

	@Test
	void aStoredFixedRateDefinitionReadsBackAndIsWrittenAgainByteForByte() {
		ScheduleDefinition definition = ScheduleFormat.decode(STORED_FIXED_RATE);
		assertThat(definition).isEqualTo(new ScheduleDefinition("beats", ScheduleDefinition.Kind.FIXED_RATE, "PT0.3S",
				"Z", "FIRE_ONCE", "beat"));
		Schedule beat = Schedule.fixedRate("beat", "beats", Duration.ofMillis(300)).withPayload("beat");
		assertThat(ScheduleDefinitions.schedule("beat", definition)).isEqualTo(beat);
		assertThat(ScheduleFormat.encode(ScheduleDefinitions.of(beat))).isEqualTo(STORED_FIXED_RATE);
	}

	@Test
	void aStoredStateKeepsItsStoredFormAndReadsItsDefinition() {
		ScheduleState state = ScheduleFormat.state("beat", "beats", "1700000000000:1:" + STORED_FIXED_RATE);
		assertThat(state.nextTickMillis()).isEqualTo(1_700_000_000_000L);
		assertThat(state.paused()).isTrue();
		assertThat(state.definition()).isEqualTo(ScheduleFormat.decode(STORED_FIXED_RATE));
		assertThat(state.ofLaterVersion()).isFalse();
		assertThat(state.stored()).isEqualTo("1700000000000:1:" + STORED_FIXED_RATE);
	}

	@Test
	void aDefinitionNoVersionWroteIsUnreadableAndNotOfALaterVersion() {
		for (String garbage : new String[] { "not a definition", "", "1\nbeats\nhourly\nZ\nSKIP\n",
				"1\nbeats\nevery PT1H\nZ\nSKIP", "x\nbeats\nevery PT1H\nZ\nSKIP\n" }) {
			ScheduleState state = ScheduleFormat.state("odd", "beats", "5:0:" + garbage);
			assertThat(state.definition()).as(garbage).isNull();
			assertThat(state.ofLaterVersion()).as(garbage).isFalse();
			assertThat(state.stored()).isEqualTo("5:0:" + garbage);
		}
	}

	@Test
	void aDefinitionOfALaterVersionIsUnreadableAndToldApart() {
		ScheduleState state = ScheduleFormat.state("future", "jobs", "5:0:2\nanything the next version writes");
		assertThat(state.definition()).isNull();
		assertThat(state.ofLaterVersion()).isTrue();
		assertThat(ScheduleFormat.isOfLaterVersion("9999999999\nmore")).isFalse();
	}

	@Test
	void aStoredFormThatIsNoStateIsRefused() {
		assertThatExceptionOfType(CorruptMessageException.class)
			.isThrownBy(() -> ScheduleFormat.state("garbled", "beats", "not a state"))
			.withMessageContaining("schedule 'garbled' has an unreadable state");
		assertThatExceptionOfType(CorruptMessageException.class)
			.isThrownBy(() -> ScheduleFormat.state("garbled", "beats", "12x:0:" + STORED_CRON));
	}

}
