package io.github.delayqueue.test.readme;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's Quick start and its test are the classes of this package, as they are here
 * from the first import on, so what the README shows compiles and passes.
 */
class ReadmeExamplesTests {

	@ParameterizedTest
	@ValueSource(strings = { "Orders.java", "OrderTimeoutTests.java" })
	void theReadmeShowsTheClassAsItIsHere(String file) throws IOException {
		String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
		String source = Files.readString(Path.of("src/test/java/io/github/delayqueue/test/readme", file),
				StandardCharsets.UTF_8);
		assertThat(readme).as("the README's copy of %s", file).contains(source.substring(source.indexOf("import ")));
	}

}
