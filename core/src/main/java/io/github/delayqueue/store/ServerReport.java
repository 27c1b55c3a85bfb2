package io.github.delayqueue.store;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What the servers that keep the messages say of themselves: how they are deployed, each
 * primary's version, memory and persistence, and the warnings their settings call for.
 *
 * @param mode {@code standalone}, {@code sentinel} or {@code cluster}
 * @param primaries each primary: one, or every primary of a cluster
 * @param warnings settings that may lose messages or soon refuse writes, each naming its
 * primary where there are several; empty when all is well
 */
public record ServerReport(String mode, List<Primary> primaries, List<String> warnings) {

	/**
	 * Keeps unmodifiable copies of the lists.
	 */
	public ServerReport {
		primaries = List.copyOf(primaries);
		warnings = List.copyOf(warnings);
	}

	/**
	 * One primary server.
	 *
	 * @param address where the server listens, as {@code host:port}; {@code port <n>}
	 * when neither the server nor the connection factory tells the host
	 * @param version its version, such as {@code 7.2.4}; absent if it could not be read
	 * @param replicas replicas connected to it
	 * @param usedMemoryBytes memory it uses
	 * @param maxMemoryBytes its memory limit, 0 when it has none
	 * @param evictionPolicy its {@code maxmemory-policy}, such as {@code noeviction}
	 * @param persistence how it keeps data on disk: {@code AOF}, {@code RDB},
	 * {@code AOF and RDB}, {@code none}, or {@code unknown} where it does not say
	 * @param error why it could not be read, absent when it was
	 */
	public record Primary(String address, @Nullable String version, int replicas, long usedMemoryBytes,
			long maxMemoryBytes, @Nullable String evictionPolicy, String persistence, @Nullable String error) {
	}

}
