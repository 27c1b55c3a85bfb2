package io.github.delayqueue.producer;

import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.convert.TextPayloadConverter;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.testsupport.NoResourceTransactionManager;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * What {@link DelayQueueTemplate} sends for messages with a group, against a store that
 * records the messages it is given: {@code clicks} is spread over 3 partitions,
 * {@code orders} has one. The scripts that store groups have their own tests on real
 * Redis.
 */
class GroupedSendTests {

	private final List<String> calls = new CopyOnWriteArrayList<>();

	private final List<NewMessage> sent = new CopyOnWriteArrayList<>();

	private final MessageStore store = recordingStore(TopicPartitions.of(Map.of("clicks", 3)));

	private final DelayQueueTemplate template = new DelayQueueTemplate(this.store, new TextPayloadConverter(),
			DataSize.ofKilobytes(64));

	@Test
	void everySendPathGivesTheStoreTheGroupOfItsMessage() {
		this.template.send(message("o-1", "shop-1"));
		this.template.sendAsync(message("o-2", "shop-2")).join();
		this.template.sendAll(List.of(message("o-3", "shop-3"), message("o-4", null)));
		this.template.sendAllAsync(List.of(message("o-5", "shop-5"))).join();
		new TransactionTemplate(new NoResourceTransactionManager())
			.executeWithoutResult((status) -> this.template.send(message("o-6", "shop-6")));
		assertThat(this.sent).extracting(NewMessage::id, NewMessage::group)
			.containsExactly(tuple("o-1", "shop-1"), tuple("o-2", "shop-2"), tuple("o-3", "shop-3"), tuple("o-4", null),
					tuple("o-5", "shop-5"), tuple("o-6", "shop-6"));
	}

	@Test
	void aGroupedMessageCarriesItsGroupInAReservedHeaderForItsReplayAfterDeath() {
		this.template.sendAll(List.of(message("o-1", "shop-1"), message("o-2", null)));
		assertThat(this.sent).extracting((message) -> headers(message).get(MessageFormat.GROUP_HEADER))
			.containsExactly("shop-1", null);
	}

	@Test
	void aReplacingSendKeepsItsGroup() {
		this.template.send(DelayMessage.builder("orders", "second")
			.id("o-1")
			.group("shop-1")
			.replaceIfPending()
			.delay(Duration.ofMinutes(5))
			.build());
		assertThat(this.sent).singleElement().satisfies((message) -> {
			assertThat(message.replaceIfPending()).isTrue();
			assertThat(message.group()).isEqualTo("shop-1");
		});
	}

	@Test
	void aGroupedMessageIsSentToATopicOfSeveralPartitionsWithItsGroup() {
		this.template.sendAll(List.of(DelayMessage.builder("clicks", "click").id("c-1").group("shop-1").build()));
		assertThat(this.sent).singleElement().satisfies((message) -> {
			assertThat(message.id()).isEqualTo("c-1");
			assertThat(message.group()).isEqualTo("shop-1");
		});
	}

	@Test
	void aMessageWithoutAGroupIsStillSentToATopicOfSeveralPartitions() {
		this.template.send(DelayMessage.builder("clicks", "click").id("c-1").build());
		assertThat(this.sent).extracting(NewMessage::id).containsExactly("c-1");
	}

	@Test
	void aBatchThatSendsOneIdInTwoGroupsIsRefusedBeforeAnythingIsStored() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> this.template.sendAll(List.of(message("o-1", "shop-1"), message("o-1", "shop-2"))))
			.withMessage("Message id 'o-1' is sent to topic 'orders' twice in one batch, in group 'shop-1' and in"
					+ " group 'shop-2': a batch may send an id in one group only");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> this.template.sendAllAsync(List.of(message("o-1", null), message("o-1", "shop-2"))))
			.withMessage("Message id 'o-1' is sent to topic 'orders' twice in one batch, in no group and in"
					+ " group 'shop-2': a batch may send an id in one group only");
		assertThat(this.sent).isEmpty();
	}

	@Test
	void aBatchMaySendOneIdTwiceInTheSameGroupOrToTwoTopicsInTwoGroups() {
		this.template.sendAll(List.of(message("o-1", "shop-1"), message("o-1", "shop-1"),
				DelayMessage.builder("invoices", "payload").id("o-1").group("shop-2").build()));
		assertThat(this.sent).extracting(NewMessage::group).containsExactly("shop-1", "shop-1", "shop-2");
	}

	private static DelayMessage message(String id, @Nullable String group) {
		DelayMessage.Builder builder = DelayMessage.builder("orders", "payload").id(id).delay(Duration.ofMinutes(5));
		return (group != null) ? builder.group(group).build() : builder.build();
	}

	/**
	 * A store that answers {@code partitions()} and stores every message sent as new; any
	 * other call fails. Every call is recorded by name, every message sent kept.
	 */
	private MessageStore recordingStore(TopicPartitions partitions) {
		return (MessageStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { MessageStore.class },
				(proxy, method, arguments) -> {
					this.calls.add(method.getName());
					return switch (method.getName()) {
						case "partitions" -> partitions;
						case "send" -> sent(arguments[0]);
						case "sendAsync" -> CompletableFuture.completedFuture(sent(arguments[0]));
						default -> throw new UnsupportedOperationException(method.getName());
					};
				});
	}

	private static Map<String, String> headers(NewMessage message) {
		byte[] stored = new byte[message.body().length + 4];
		System.arraycopy("0:0:".getBytes(StandardCharsets.US_ASCII), 0, stored, 0, 4);
		System.arraycopy(message.body(), 0, stored, 4, message.body().length);
		return MessageFormat.decode(message.id(), stored).headers();
	}

	@SuppressWarnings("unchecked")
	private Map<String, List<Sent>> sent(Object messagesByTopic) {
		Map<String, List<Sent>> results = new LinkedHashMap<>();
		((Map<String, List<NewMessage>>) messagesByTopic).forEach((topic, messages) -> {
			List<Sent> topicResults = new ArrayList<>();
			for (NewMessage message : messages) {
				this.sent.add(message);
				topicResults.add(new Sent(message.id(), 0, false, message.replaceIfPending()));
			}
			results.put(topic, topicResults);
		});
		return results;
	}

}
