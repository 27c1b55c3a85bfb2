package io.github.delayqueue.test;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Applies {@link EmbeddedDelayQueueInitializer} to the context of a test class annotated
 * with {@link EmbeddedDelayQueue @EmbeddedDelayQueue}. Registered in
 * {@code META-INF/spring.factories}.
 */
public final class EmbeddedDelayQueueContextCustomizerFactory implements ContextCustomizerFactory {

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		EmbeddedDelayQueue annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass,
				EmbeddedDelayQueue.class);
		return (annotation != null) ? new Customizer(timeout(annotation)) : null;
	}

	private static Duration timeout(EmbeddedDelayQueue annotation) {
		try {
			return DurationStyle.detectAndParse(annotation.timeout());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(
					"@EmbeddedDelayQueue(timeout) must be a duration like 10s or 500ms, but is '" + annotation.timeout()
							+ "'",
					ex);
		}
	}

	/**
	 * The customizer of one configuration; contexts with the same timeout are shared as
	 * Spring's test context cache shares them, each with its own key prefix.
	 */
	private record Customizer(Duration timeout) implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
			new EmbeddedDelayQueueInitializer(this.timeout).initialize(context);
		}

	}

}
