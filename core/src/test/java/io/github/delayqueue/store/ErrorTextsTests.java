package io.github.delayqueue.store;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one bound of stored error texts: {@link ErrorTexts}.
 */
class ErrorTextsTests {

	private static final String PAIR = "\uD83D\uDE00";

	@Test
	void aTextOfAtMost2000CharactersIsKeptAsItIs() {
		String text = "e".repeat(1998) + PAIR;
		assertThat(ErrorTexts.bounded(text)).isSameAs(text);
	}

	@Test
	void aLongerTextIsCutTo2000Characters() {
		String bounded = ErrorTexts.bounded("e".repeat(20_173));
		assertThat(bounded.length()).isEqualTo(TopicStore.MAX_ERROR_LENGTH);
	}

	@Test
	void aCutThatWouldSplitASurrogatePairEndsBeforeThePair() {
		String bounded = ErrorTexts.bounded("e".repeat(1999) + PAIR + "e");
		assertThat(bounded.length()).isEqualTo(1999);
		assertThat(bounded).doesNotContain("\uD83D");
	}

	@Test
	void aPairThatEndsAtTheBoundIsKeptWhole() {
		String bounded = ErrorTexts.bounded("e".repeat(1998) + PAIR + "e");
		assertThat(bounded).endsWith(PAIR).hasSize(2000);
	}

}
