package io.github.delayqueue.producer;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link MessageIds}: the one check of a message id, also applied by
 * {@link DelayMessage.Builder#build()}.
 */
class MessageIdsTests {

	@Test
	void usualIdsAreAcceptedAsTheyAre() {
		for (String id : new String[] { "order-42", "01J9Z3W4X5Y6", "bestellung:ä/1", "注文-7", "emoji-\uD83D\uDE00",
				"i".repeat(DelayMessage.MAX_ID_LENGTH) }) {
			assertThat(MessageIds.requireValid(id)).isSameAs(id);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "", " ", "\t \n" })
	void blankIdIsRejected(String id) {
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> MessageIds.requireValid(id))
			.withMessageContaining("blank");
	}

	@Test
	void nullIdIsRejected() {
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> MessageIds.requireValid(null))
			.withMessageContaining("null");
	}

	@Test
	void idOverTheMaximumLengthIsRejectedNamingTheLimitAndTheLength() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> MessageIds.requireValid("i".repeat(DelayMessage.MAX_ID_LENGTH + 1)))
			.withMessageContaining(String.valueOf(DelayMessage.MAX_ID_LENGTH))
			.withMessageContaining(String.valueOf(DelayMessage.MAX_ID_LENGTH + 1));
	}

	@Test
	void idWithALineBreakIsRejectedNamingTheCharacterAndItsIndex() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> MessageIds.requireValid("order-42\nINFO forged line"))
			.withMessageContaining("control character")
			.withMessageContaining("U+000A")
			.withMessageContaining("index 8");
	}

	@ParameterizedTest
	@ValueSource(strings = { "a\u0000b", "a\u0007b", "a\rb", "a\u001bb", "a\u007fb", "a\u0085b" })
	void idWithAnyControlCharacterIsRejected(String id) {
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> MessageIds.requireValid(id))
			.withMessageContaining("control character")
			.withMessageContaining("index 1");
	}

	@Test
	void idsWithDifferentUnpairedSurrogatesWouldCollideInRedis() {
		assertThat("a\uD800".getBytes(StandardCharsets.UTF_8)).isEqualTo("a\uDFFF".getBytes(StandardCharsets.UTF_8));
	}

	@ParameterizedTest
	@ValueSource(strings = { "ab\uD800", "ab\uDC00", "ab\uDC00\uD800", "ab\uD800x" })
	void idWithAnUnpairedSurrogateIsRejectedNamingItsIndex(String id) {
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> MessageIds.requireValid(id))
			.withMessageContaining("unpaired surrogate")
			.withMessageContaining("index 2");
	}

	@Test
	void builderAppliesTheSameCheck() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").id("order\r\n42").build())
			.withMessageContaining("control character");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").id("order-\uD83D").build())
			.withMessageContaining("unpaired surrogate");
	}

}
