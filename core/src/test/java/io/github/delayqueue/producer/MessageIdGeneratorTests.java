package io.github.delayqueue.producer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ids from {@link MessageIdGenerator}: length, alphabet, uniqueness and order.
 */
class MessageIdGeneratorTests {

	private static final String ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

	private static final int COUNT = 200_000;

	@Test
	void idsAreTwentyCharactersOfCrockfordBase32() {
		MessageIdGenerator generator = new MessageIdGenerator();
		for (int i = 0; i < 10_000; i++) {
			String id = generator.next();
			assertThat(id).hasSize(20);
			for (char c : id.toCharArray()) {
				assertThat(ALPHABET.indexOf(c)).as("character '%s' of %s", c, id).isNotNegative();
			}
		}
	}

	@Test
	void crockfordAlphabetIsInAsciiOrderSoThatIdsSortAsText() {
		for (int i = 1; i < ALPHABET.length(); i++) {
			assertThat(ALPHABET.charAt(i)).isGreaterThan(ALPHABET.charAt(i - 1));
		}
	}

	@Test
	void idsAreUniqueOverTwoHundredThousandIds() {
		MessageIdGenerator generator = new MessageIdGenerator();
		Set<String> ids = new HashSet<>(COUNT * 2);
		for (int i = 0; i < COUNT; i++) {
			ids.add(generator.next());
		}
		assertThat(ids).hasSize(COUNT);
	}

	@Test
	void idsSortLexicographicallyInGenerationOrder() {
		MessageIdGenerator generator = new MessageIdGenerator();
		String previous = generator.next();
		for (int i = 1; i < COUNT; i++) {
			String id = generator.next();
			assertThat(id).as("id %d", i).isGreaterThan(previous);
			previous = id;
		}
	}

	@Test
	void firstTenCharactersEncodeTheMillisecondOfGeneration() {
		MessageIdGenerator generator = new MessageIdGenerator();
		long before = System.currentTimeMillis();
		String id = generator.next();
		long after = System.currentTimeMillis();
		assertThat(decode(id.substring(0, 10))).isBetween(before, after);
	}

	@Test
	void idsOfTwoGeneratorsCreatedOneAfterTheOtherDiffer() {
		assertThat(new MessageIdGenerator().next()).isNotEqualTo(new MessageIdGenerator().next());
	}

	@Test
	void idsAreUniqueAcrossFourThreadsGeneratingConcurrentlyAndEachThreadSeesThemInOrder() throws Exception {
		MessageIdGenerator generator = new MessageIdGenerator();
		int threads = 4;
		int perThread = COUNT / threads;
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<List<String>>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				Callable<List<String>> task = () -> {
					start.await();
					List<String> ids = new ArrayList<>(perThread);
					for (int i = 0; i < perThread; i++) {
						ids.add(generator.next());
					}
					return ids;
				};
				futures.add(executor.submit(task));
			}
			start.countDown();
			Set<String> all = new HashSet<>(COUNT * 2);
			for (Future<List<String>> future : futures) {
				List<String> ids = future.get(60, TimeUnit.SECONDS);
				assertThat(ids).hasSize(perThread).isSorted();
				all.addAll(ids);
			}
			assertThat(all).hasSize(threads * perThread);
		}
		finally {
			executor.shutdownNow();
		}
	}

	private static long decode(String base32) {
		long value = 0;
		for (char c : base32.toCharArray()) {
			value = value * 32 + ALPHABET.indexOf(c);
		}
		return value;
	}

}
