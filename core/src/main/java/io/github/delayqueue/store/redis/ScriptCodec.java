package io.github.delayqueue.store.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * One call of a script, declared once: its arguments in the order its {@code .lua} header
 * names them ({@code ARGV}), and what its reply means ({@code Returns}), with its
 * {@link Script} (keys and reply type). The codecs are the only code that builds a
 * script's arguments or reads its reply by position; {@code ScriptHeadersTests} checks
 * each {@link ScriptCodecs#signatures() signature} against the header.
 *
 * @param <R> what the reply reads as
 */
interface ScriptCodec<R> {

	/**
	 * @return the script's arguments and reply, declared once
	 */
	Signature<?> signature();

	/**
	 * @return the script this call runs
	 */
	default Script script() {
		return signature().script();
	}

	/**
	 * @return the arguments ({@code ARGV}), in order, as the signature writes them
	 */
	@SuppressWarnings("unchecked")
	default List<Object> arguments() {
		return ((Signature<Object>) signature()).write(this);
	}

	/**
	 * Reads the script's reply.
	 * @param reply a {@code Long}, or a {@code List} of {@code Long}, {@code byte[]} and
	 * nulls, as the script returned it
	 * @return what it means
	 */
	R read(Object reply);

	/**
	 * A script's arguments, in order, each as its header names it and how it is written
	 * from a call, and how the header's {@code Returns} line goes on.
	 *
	 * @param <C> the codec whose calls it writes
	 * @param script the script
	 * @param returns how the header's {@code Returns} line goes on
	 * @param arguments the arguments, in order
	 */
	record Signature<C>(Script script, String returns, List<Argument<C>> arguments) {

		@SafeVarargs
		static <C> Signature<C> of(Script script, String returns, Argument<C>... arguments) {
			return new Signature<>(script, returns, List.of(arguments));
		}

		/**
		 * @return for each {@code ARGV} line of the header, how it must start
		 */
		List<String> headers() {
			return this.arguments.stream().map(Argument::header).toList();
		}

		/**
		 * Writes the arguments of a call.
		 * @param call the call
		 * @return its arguments, in order
		 */
		List<Object> write(C call) {
			List<Object> out = new ArrayList<>();
			this.arguments.forEach((argument) -> argument.writer().accept(call, out));
			return out;
		}

	}

	/**
	 * One argument of a script (or, for the last, the rest of them).
	 *
	 * @param <C> the codec whose calls it writes
	 * @param header how the header's {@code ARGV} line starts: the index in brackets
	 * ({@code [1]}, or {@code [3..]} for the rest) and the argument's name
	 * @param writer appends the argument's values of a call
	 */
	record Argument<C>(String header, BiConsumer<C, List<Object>> writer) {

		/** One value. */
		static <C> Argument<C> of(String header, Function<C, Object> value) {
			return new Argument<>(header, (call, out) -> out.add(value.apply(call)));
		}

		/** One value, or none when it is {@code null}: only at the end. */
		static <C> Argument<C> optional(String header, Function<C, @Nullable Object> value) {
			return new Argument<>(header, (call, out) -> {
				Object written = value.apply(call);
				if (written != null) {
					out.add(written);
				}
			});
		}

		/** The rest of the arguments. */
		static <C> Argument<C> rest(String header, BiConsumer<C, List<Object>> values) {
			return new Argument<>(header, values);
		}

	}

}
