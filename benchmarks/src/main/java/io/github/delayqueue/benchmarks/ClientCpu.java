package io.github.delayqueue.benchmarks;

import java.lang.management.ManagementFactory;

/**
 * The CPU time this JVM has used, all threads: the client side of "where the time goes".
 */
final class ClientCpu {

	private ClientCpu() {
	}

	/**
	 * @return CPU time in microseconds
	 */
	static long micros() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
			return os.getProcessCpuTime() / 1000;
		}
		return 0;
	}

}
