package io.github.delayqueue.store.redis;

import java.util.List;

/**
 * One call of a script, declared once: its arguments in the order its {@code .lua} header
 * names them ({@code ARGV}), and what its reply means ({@code Returns}). Its keys are
 * declared by its {@link Script}. The codecs are the only code that builds a script's
 * arguments or reads its reply by position; {@code ScriptHeadersTests} checks each
 * {@link ScriptCodecs#signature(Script) signature} against the header.
 *
 * @param <R> what the reply reads as
 */
sealed interface ScriptCodec<R> permits ScriptCodecs.Send, ScriptCodecs.Promote, ScriptCodecs.Claim, ScriptCodecs.Ack,
		ScriptCodecs.Retry, ScriptCodecs.DeadLetter, ScriptCodecs.ExpireLeases, ScriptCodecs.Release,
		ScriptCodecs.ReleaseClaim, ScriptCodecs.ExtendLeases, ScriptCodecs.Cancel, ScriptCodecs.Reschedule,
		ScriptCodecs.Replay, ScriptCodecs.PurgeDead, ScriptCodecs.Stats, ScriptCodecs.Page, ScriptCodecs.Inspect,
		ScriptCodecs.PartitionCount, ScriptCodecs.BeginPartitionChange, ScriptCodecs.MarkPartition,
		ScriptCodecs.CommitPartitionChange, ScriptCodecs.AbortPartitionChange {

	/**
	 * @return the script this call runs
	 */
	Script script();

	/**
	 * @return the arguments ({@code ARGV}), in order
	 */
	List<Object> arguments();

	/**
	 * Reads the script's reply.
	 * @param reply a {@code Long}, or a {@code List} of {@code Long}, {@code byte[]} and
	 * nulls, as the script returned it
	 * @return what it means
	 */
	R read(Object reply);

	/**
	 * How a script's header must describe its arguments and reply.
	 *
	 * @param script the script
	 * @param arguments for each {@code ARGV} line of the header, in order, how it starts:
	 * the index in brackets ({@code [1]}, or {@code [3..]} for the rest) and the
	 * argument's name
	 * @param returns how the header's {@code Returns} line goes on
	 */
	record Signature(Script script, List<String> arguments, String returns) {

		static Signature of(Script script, String returns, String... arguments) {
			return new Signature(script, List.of(arguments), returns);
		}

	}

}
