package io.github.delayqueue.producer;

import java.security.SecureRandom;

/**
 * Generates message ids: 20 characters of Crockford base32, the first 10 encoding the
 * current epoch millisecond and the last 10 a random number that is incremented for ids
 * generated in the same millisecond. Ids from one generator sort in generation order; ids
 * from different processes sort by time and are unique with overwhelming probability.
 */
public final class MessageIdGenerator {

	private static final char[] ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ".toCharArray();

	private static final long RANDOM_BITS = 50;

	private static final long RANDOM_MASK = (1L << RANDOM_BITS) - 1;

	private final SecureRandom random = new SecureRandom();

	private long lastMillis = -1;

	private long lastRandom;

	/**
	 * @return a new id
	 */
	public synchronized String next() {
		long now = System.currentTimeMillis();
		if (now > this.lastMillis) {
			this.lastMillis = now;
			this.lastRandom = this.random.nextLong() & (RANDOM_MASK >>> 1);
		}
		else {
			// Same millisecond, or the clock went back: stay monotonic.
			this.lastRandom++;
			if (this.lastRandom > RANDOM_MASK) {
				this.lastMillis++;
				this.lastRandom = 0;
			}
		}
		char[] id = new char[20];
		encode(this.lastMillis, id, 0);
		encode(this.lastRandom, id, 10);
		return new String(id);
	}

	private static void encode(long value, char[] target, int offset) {
		for (int i = 9; i >= 0; i--) {
			target[offset + i] = ALPHABET[(int) (value & 31)];
			value >>>= 5;
		}
	}

}
