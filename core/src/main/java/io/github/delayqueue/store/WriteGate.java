package io.github.delayqueue.store;

/**
 * Lets a call be written to Redis, or not, so that a caller can order the writes of its
 * calls: a claim, and the script sent again in full when Redis had lost it, both go
 * through the gate of the claim, which the consumer closes when it stops, right after it
 * wrote the hand-back of that claim. Redis runs the commands of one connection in the
 * order they were written, so what the claim leased is handed back even if no reply is
 * ever read.
 */
@FunctionalInterface
public interface WriteGate {

	/** A gate that is always open. */
	WriteGate OPEN = (write) -> {
		write.run();
		return true;
	};

	/**
	 * Writes a call, if the gate is open.
	 * @param write writes the call (does not wait for Redis)
	 * @return whether it was written
	 */
	boolean write(Runnable write);

}
