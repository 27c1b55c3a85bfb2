package io.github.delayqueue.observation;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import brave.Tracing;
import brave.handler.MutableSpan;
import brave.handler.SpanHandler;
import brave.propagation.ThreadLocalCurrentTraceContext;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.testsupport.QueueContexts;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.brave.bridge.BraveBaggageManager;
import io.micrometer.tracing.brave.bridge.BraveCurrentTraceContext;
import io.micrometer.tracing.brave.bridge.BravePropagator;
import io.micrometer.tracing.brave.bridge.BraveTracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The trace context travels in the message headers, so the listener's span continues the
 * producer's trace after the delay.
 */
class TracePropagationTests {

	private final List<MutableSpan> spans = new CopyOnWriteArrayList<>();

	private final Tracing tracing = Tracing.newBuilder()
		.currentTraceContext(ThreadLocalCurrentTraceContext.create())
		.addSpanHandler(new SpanHandler() {
			@Override
			public boolean end(brave.propagation.TraceContext context, MutableSpan span, Cause cause) {
				TracePropagationTests.this.spans.add(span);
				return true;
			}
		})
		.build();

	private final Tracer tracer = new BraveTracer(this.tracing.tracer(),
			new BraveCurrentTraceContext(this.tracing.currentTraceContext()), new BraveBaggageManager());

	@AfterEach
	void closeTracing() {
		this.tracing.close();
	}

	@Test
	void listenerSpanContinuesTheTraceOfTheSenderAfterTheDelay() {
		ObservationRegistry observations = tracingObservations();
		TracedListener listener = new TracedListener(this.tracer);
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(ObservationRegistry.class, () -> observations)
			.withBean(TracedListener.class, () -> listener)
			.run((context) -> {
				Span parent = this.tracer.nextSpan().name("place order").start();
				try (Tracer.SpanInScope scope = this.tracer.withSpan(parent)) {
					context.getBean(DelayQueueTemplate.class).send("traced", "hello", Duration.ofMillis(300));
				}
				finally {
					parent.end();
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.traceIds.size() == 1);
				assertThat(listener.traceIds).containsExactly(parent.context().traceId());
				await().atMost(Duration.ofSeconds(5))
					.until(() -> this.spans.stream().anyMatch((span) -> "traced receive".equals(span.name())));
				assertThat(this.spans).extracting(MutableSpan::name).contains("traced send", "traced receive");
			});
	}

	@Test
	void listenerSpanContinuesTheTraceOfAnAsynchronousSend() {
		ObservationRegistry observations = tracingObservations();
		TracedListener listener = new TracedListener(this.tracer);
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(ObservationRegistry.class, () -> observations)
			.withBean(TracedListener.class, () -> listener)
			.run((context) -> {
				Span parent = this.tracer.nextSpan().name("place order").start();
				try (Tracer.SpanInScope scope = this.tracer.withSpan(parent)) {
					context.getBean(DelayQueueTemplate.class)
						.sendAsync(DelayMessage.builder("traced", "hello").delay(Duration.ofMillis(300)).build())
						.join();
				}
				finally {
					parent.end();
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.traceIds.size() == 1);
				assertThat(listener.traceIds).containsExactly(parent.context().traceId());
				assertThat(this.spans).extracting(MutableSpan::name).contains("traced send");
			});
	}

	private ObservationRegistry tracingObservations() {
		Propagator propagator = new BravePropagator(this.tracing);
		ObservationRegistry observations = ObservationRegistry.create();
		observations.observationConfig()
			.observationHandler(new PropagatingSenderTracingObservationHandler<>(this.tracer, propagator))
			.observationHandler(new PropagatingReceiverTracingObservationHandler<>(this.tracer, propagator))
			.observationHandler(new DefaultTracingObservationHandler(this.tracer));
		return observations;
	}

	static class TracedListener {

		private final Tracer tracer;

		final List<String> traceIds = new CopyOnWriteArrayList<>();

		TracedListener(Tracer tracer) {
			this.tracer = tracer;
		}

		@DelayListener(topic = "traced")
		void on(Delivery<String> delivery) {
			Span current = this.tracer.currentSpan();
			this.traceIds.add((current != null) ? current.context().traceId() : "none");
		}

	}

}
