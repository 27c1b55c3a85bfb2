package io.github.delayqueue.producer;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

import io.github.delayqueue.time.Durations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Validation and construction of {@link DelayMessage}, without Redis.
 */
class DelayMessageTests {

	@Test
	void invalidMessageExceptionIsAnIllegalArgumentException() {
		assertThatThrownBy(() -> DelayMessage.builder(null, "payload").build())
			.isInstanceOf(IllegalArgumentException.class)
			.isExactlyInstanceOf(InvalidMessageException.class);
	}

	@Test
	void nullTopicIsRejectedNamingTheTopic() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder(null, "payload").build())
			.withMessageContaining("Topic")
			.withMessageContaining("null");
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "   ", "\t", "\n" })
	void blankTopicIsRejectedNamingTheTopic(String topic) {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder(topic, "payload").build())
			.withMessageContaining("Topic")
			.withMessageContaining("blank");
	}

	@ParameterizedTest
	@ValueSource(strings = { "{orders", "orders}", "ord{ers}", "{}", "a}b{c" })
	void topicWithABraceIsRejectedNamingTheBraces(String topic) {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder(topic, "payload").build())
			.withMessageContaining("'" + topic + "'")
			.withMessageContaining("'{' or '}'");
	}

	@Test
	void topicWithAHashIsRejectedBecauseItNamesPartitions() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders#2", "payload").build())
			.withMessage("Topic 'orders#2' must not contain '#', which names the partitions of a topic");
	}

	@ParameterizedTest
	@ValueSource(strings = { "order s", " orders", "orders ", "or\tders", "or\nders", "or\rders", "or\u2003ders",
			"or\u2028ders" })
	void topicWithWhitespaceIsRejectedNamingTheWhitespace(String topic) {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder(topic, "payload").build())
			.withMessageContaining("Topic")
			.withMessageContaining("whitespace");
	}

	@ParameterizedTest
	@ValueSource(strings = { "or\u0000ders", "or\u0007ders", "or\u007fders" })
	void topicWithAControlCharacterIsRejected(String topic) {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder(topic, "payload").build())
			.withMessageContaining("Topic");
	}

	@Test
	void topicOfTwoHundredCharactersIsAccepted() {
		String topic = "t".repeat(200);
		assertThat(DelayMessage.builder(topic, "payload").build().topic()).isEqualTo(topic);
	}

	@Test
	void topicOverTwoHundredCharactersIsRejectedNamingTheLimitAndTheLength() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("t".repeat(201), "payload").build())
			.withMessageContaining("Topic")
			.withMessageContaining("200")
			.withMessageContaining("201");
	}

	@Test
	void topicWithPunctuationAndNonAsciiLettersIsAccepted() {
		for (String topic : new String[] { "orders", "orders.v2", "orders:eu-west_1", "bestellungen-ä", "注文" }) {
			assertThat(DelayMessage.builder(topic, "payload").build().topic()).isEqualTo(topic);
		}
	}

	@Test
	void nullPayloadIsRejectedNamingThePayloadAndTheTopic() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", null).build())
			.withMessageContaining("Payload")
			.withMessageContaining("'orders'")
			.withMessageContaining("null");
	}

	@Test
	void negativeDelayIsRejectedNamingTheDelay() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").delay(Duration.ofMillis(-1)).build())
			.withMessageContaining("Delay")
			.withMessageContaining("negative")
			.withMessageContaining("-1ms");
	}

	@Test
	void delayOverTenYearsIsRejectedNamingTheDelay() {
		Duration tooLong = DelayMessage.MAX_DELAY.plusMillis(1);
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").delay(tooLong).build())
			.withMessageContaining("Delay")
			.withMessageContaining("ten years")
			.withMessageContaining(Durations.format(tooLong));
	}

	@Test
	void priorityOutOfRangeIsRejectedNamingThePriority() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").priority(10).build())
			.withMessageContaining("Priority")
			.withMessageContaining("10");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").priority(-1).build())
			.withMessageContaining("-1");
	}

	@Test
	void priorityIsZeroUnlessSetAndAnyFromZeroToNineIsAccepted() {
		assertThat(DelayMessage.builder("orders", "payload").build().priority()).isZero();
		assertThat(DelayMessage.builder("orders", "payload").priority(0).build().priority()).isZero();
		assertThat(DelayMessage.builder("orders", "payload").priority(DelayMessage.MAX_PRIORITY).build().priority())
			.isEqualTo(9);
	}

	@Test
	void delayOfZeroAndDelayOfExactlyTheMaximumAreAccepted() {
		assertThat(DelayMessage.builder("orders", "payload").delay(Duration.ZERO).build().delay())
			.isEqualTo(Duration.ZERO);
		assertThat(DelayMessage.builder("orders", "payload").delay(DelayMessage.MAX_DELAY).build().delay())
			.isEqualTo(DelayMessage.MAX_DELAY);
	}

	@Test
	void maximumDelayIsAtLeastTenYears() {
		assertThat(DelayMessage.MAX_DELAY).isGreaterThanOrEqualTo(ChronoUnit.DECADES.getDuration());
	}

	@Test
	void dueTimeOverTenYearsAwayIsRejectedNamingTheDueTime() {
		Instant tooFar = Instant.now().plus(DelayMessage.MAX_DELAY).plus(Duration.ofDays(1));
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").dueAt(tooFar).build())
			.withMessageContaining("Due time")
			.withMessageContaining("ten years")
			.withMessageContaining(tooFar.toString());
	}

	@Test
	void dueTimeJustUnderTenYearsAwayIsAccepted() {
		Instant dueAt = Instant.now().plus(DelayMessage.MAX_DELAY).minus(Duration.ofDays(1));
		assertThat(DelayMessage.builder("orders", "payload").dueAt(dueAt).build().dueAt()).isEqualTo(dueAt);
	}

	@Test
	void dueTimeInThePastIsAccepted() {
		Instant dueAt = Instant.now().minus(Duration.ofDays(1));
		assertThat(DelayMessage.builder("orders", "payload").dueAt(dueAt).build().dueAt()).isEqualTo(dueAt);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "\t", "  \n " })
	void blankIdIsRejectedNamingTheId(String id) {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").id(id).build())
			.withMessageContaining("id")
			.withMessageContaining("blank");
	}

	@Test
	void idOfTwoHundredCharactersIsAccepted() {
		String id = "i".repeat(200);
		assertThat(DelayMessage.builder("orders", "payload").id(id).build().id()).isEqualTo(id);
	}

	@Test
	void idOverTwoHundredCharactersIsRejectedNamingTheLimitAndTheLength() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").id("i".repeat(201)).build())
			.withMessageContaining("id")
			.withMessageContaining("200")
			.withMessageContaining("201");
	}

	@Test
	void delayAndDueTimeTogetherAreRejectedNamingBoth() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload")
				.delay(Duration.ofSeconds(1))
				.dueAt(Instant.now().plusSeconds(1))
				.build())
			.withMessageContaining("delay")
			.withMessageContaining("due time")
			.withMessageContaining("not both");
	}

	@Test
	void nullHeaderNameIsRejectedNamingTheHeader() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").header(null, "value"))
			.withMessageContaining("Header")
			.withMessageContaining("null");
	}

	@Test
	void nullHeaderValueIsRejectedNamingTheHeader() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").header("name", null))
			.withMessageContaining("Header")
			.withMessageContaining("null");
	}

	@Test
	void messageWithOnlyTopicAndPayloadHasNoIdNoDelayNoDueTimeAndNoHeaders() {
		Object payload = new Object();
		DelayMessage message = DelayMessage.builder("orders", payload).build();
		assertThat(message.topic()).isEqualTo("orders");
		assertThat(message.payload()).isSameAs(payload);
		assertThat(message.id()).isNull();
		assertThat(message.delay()).isNull();
		assertThat(message.dueAt()).isNull();
		assertThat(message.headers()).isEmpty();
	}

	@Test
	void messageKeepsEveryValueGiven() {
		byte[] payload = { 1, 2, 3 };
		DelayMessage message = DelayMessage.builder("orders", payload)
			.id("order-42")
			.delay(Duration.ofMinutes(5))
			.header("tenant", "acme")
			.build();
		assertThat(message.topic()).isEqualTo("orders");
		assertThat(message.payload()).isSameAs(payload);
		assertThat(message.id()).isEqualTo("order-42");
		assertThat(message.delay()).isEqualTo(Duration.ofMinutes(5));
		assertThat(message.dueAt()).isNull();
		assertThat(message.headers()).containsExactly(Map.entry("tenant", "acme"));
		assertThat(message.toString()).contains("orders").contains("order-42");
	}

	@Test
	void headersKeepTheirInsertionOrder() {
		DelayMessage message = DelayMessage.builder("orders", "payload")
			.header("zulu", "1")
			.header("alpha", "2")
			.header("mike", "3")
			.header("bravo", "4")
			.build();
		assertThat(message.headers().keySet()).containsExactly("zulu", "alpha", "mike", "bravo");
	}

	@Test
	void headerSetTwiceKeepsTheLastValueAtItsFirstPosition() {
		DelayMessage message = DelayMessage.builder("orders", "payload")
			.header("a", "1")
			.header("b", "2")
			.header("a", "3")
			.build();
		assertThat(message.headers()).containsExactly(Map.entry("a", "3"), Map.entry("b", "2"));
	}

	@Test
	void headersAreUnmodifiable() {
		DelayMessage message = DelayMessage.builder("orders", "payload").header("tenant", "acme").build();
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> message.headers().put("other", "value"));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> message.headers().remove("tenant"));
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> message.headers().clear());
	}

	@Test
	void headersAddedToTheBuilderAfterBuildDoNotChangeTheBuiltMessage() {
		DelayMessage.Builder builder = DelayMessage.builder("orders", "payload").header("first", "1");
		DelayMessage message = builder.build();
		builder.header("second", "2");
		assertThat(message.headers()).containsExactly(Map.entry("first", "1"));
		assertThat(builder.build().headers()).containsOnlyKeys("first", "second");
	}

	@Test
	void emptyHeaderNameAndValueAreAccepted() {
		DelayMessage message = DelayMessage.builder("orders", "payload").header("", "").build();
		assertThat(message.headers()).containsExactly(Map.entry("", ""));
	}

	@Test
	void aMessageHasNoGroupUnlessOneIsSet() {
		assertThat(DelayMessage.builder("orders", "payload").build().group()).isNull();
		assertThat(DelayMessage.builder("orders", "payload").group("shop-17").build().group()).isEqualTo("shop-17");
	}

	@Test
	void anEmptyGroupIsRejectedAtOnceNamingTheLimitsAndTheLength() {
		DelayMessage.Builder builder = DelayMessage.builder("orders", "payload");
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> builder.group(""))
			.withMessage("A group name must have 1 to 200 characters, but had 0");
	}

	@Test
	void aGroupOfTwoHundredAndOneCharactersIsRejectedAtOnceNamingTheLimitsAndTheLength() {
		DelayMessage.Builder builder = DelayMessage.builder("orders", "payload");
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> builder.group("g".repeat(201)))
			.withMessage("A group name must have 1 to 200 characters, but had 201");
	}

	@ParameterizedTest
	@ValueSource(strings = { "shop\n17", "shop\u000017", "shop\t17", "shop\u007f17", "shop\u008517" })
	void aGroupWithAControlCharacterIsRejectedAtOnceNamingItsIndex(String group) {
		DelayMessage.Builder builder = DelayMessage.builder("orders", "payload");
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> builder.group(group))
			.withMessage("A group name must not contain control characters, but 'shop?17' has one at index 4");
	}

	@Test
	void aNullGroupIsRejectedAtOnce() {
		DelayMessage.Builder builder = DelayMessage.builder("orders", "payload");
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> builder.group(null))
			.withMessage("Group must not be null");
	}

	@Test
	void aGroupOfTwoHundredCharactersIsAccepted() {
		String group = "g".repeat(200);
		assertThat(DelayMessage.builder("orders", "payload").group(group).build().group()).isEqualTo(group);
	}

	@ParameterizedTest
	@ValueSource(strings = { "店舗-17", "bäckerei müller", "shop 17", "\uD83D\uDE9A-fleet", "{orders}", "a" })
	void aGroupOfAnyPrintableCharactersIsAccepted(String group) {
		assertThat(DelayMessage.builder("orders", "payload").group(group).build().group()).isEqualTo(group);
	}

	@Test
	void theGroupIsInTheMessagesDescription() {
		assertThat(DelayMessage.builder("orders", "payload").id("o-1").group("shop-17").build())
			.hasToString("DelayMessage[topic=orders, id=o-1, delay=null, dueAt=null, group=shop-17]");
	}

}
