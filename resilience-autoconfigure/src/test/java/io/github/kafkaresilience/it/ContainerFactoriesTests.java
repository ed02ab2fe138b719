package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.autoconfigure.OrderedRetryContainerFactoryConfigurer;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import io.github.kafkaresilience.listener.OrderedRetryContainerCustomizer;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two listeners in one application through two container factories: the auto-configured
 * one ({@code compensate}) and one of the application's ({@code transaction}, other
 * delays). Each keeps its keys in order, dead-letters what fails for good and leaves no
 * lock behind; only the second writes in transactions; the customizers run on both
 * containers; and the {@code properties} of the first reach its consumer and no other.
 */
@UsesSharedBroker
class ContainerFactoriesTests {

	static final List<String> customized = new CopyOnWriteArrayList<>();

	@Test
	void twoListenersThroughTwoFactoriesEachKeepOrderDeadLettersAndLocksInTheirOwnMode() throws Exception {
		String plain = SharedBroker.newTopic(2);
		String transactional = SharedBroker.newTopic(2);
		for (String topic : List.of(plain, transactional)) {
			Script.forTopic(topic).failTransiently("A", 1).failPermanently("P");
		}
		RecordingInterceptor.configs.clear();
		customized.clear();
		try (ConfigurableApplicationContext context = TestApplication.start(TwoFactoriesApplication.class, plain,
				"test.tx-topic=" + transactional)) {
			for (String topic : List.of(plain, transactional)) {
				SharedBroker.send(topic, "k", "A");
				SharedBroker.send(topic, "k", "B");
				SharedBroker.send(topic, "k", "C");
				SharedBroker.send(topic, "bad", "P");
				SharedBroker.send(topic, "other", "X");
			}
			String group = Names.group(plain); // both listeners are in the application's
												// group
			for (String topic : List.of(plain, transactional)) {
				Script script = Script.forTopic(topic);
				await().atMost(Duration.ofSeconds(60))
					.untilAsserted(() -> assertThat(script.firstSuccesses("k")).containsExactly("A", "B", "C"));
				assertThat(script.firstSuccesses("other")).containsExactly("X");
				await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
					List<ConsumerRecord<byte[], byte[]>> dlq = SharedBroker.readAll(Names.dlq(group, topic), true);
					assertThat(dlq).extracting(ContainerFactoriesTests::value).containsExactly("P");
					assertThat(ProtocolHeaders.text(dlq.get(0).headers(), ProtocolHeaders.DLQ_REASON))
						.isEqualTo(ProtocolHeaders.PERMANENT);
					assertThat(ProtocolHeaders.text(dlq.get(0).headers(), ProtocolHeaders.ORIGINAL_TOPIC))
						.isEqualTo(topic);
				});
				await().atMost(Duration.ofSeconds(30)).until(() -> liveLocks(context, topic) == 0);
			}
			// each ladder has the delays of its own factory
			assertThat(Script.forTopic(plain)
				.journal()
				.stream()
				.filter((a) -> a.value().equals("A"))
				.map(Script.Attempt::topic)).containsExactly(plain, Names.retry(group, plain, "1s"));
			assertThat(Script.forTopic(transactional)
				.journal()
				.stream()
				.filter((a) -> a.value().equals("A"))
				.map(Script.Attempt::topic)).containsExactly(transactional, Names.retry(group, transactional, "3s"));
			assertThat(transactionalIds())
				.anyMatch((id) -> id.startsWith("kafka-resilience-it-" + plain + "-tx-listener-"))
				.noneMatch((id) -> id.contains("-plain-listener-"));
			assertThat(customized).containsExactlyInAnyOrder("plain-listener", "tx-listener");
			// the properties of the plain listener reached its consumers (of its main
			// topic and of its
			// retry topics), and only those
			assertThat(RecordingInterceptor.configs).hasSize(2).allSatisfy((config) -> {
				assertThat(config.get(ConsumerConfig.CLIENT_ID_CONFIG)).asString().contains("plain-listener");
				assertThat(config.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG)).hasToString("7");
			});
		}
	}

	private static List<String> transactionalIds() throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers()))) {
			return admin.listTransactions().all().get().stream().map(TransactionListing::transactionalId).toList();
		}
	}

	private static String value(ConsumerRecord<byte[], byte[]> record) {
		return new String(record.value(), StandardCharsets.UTF_8);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TwoFactoriesApplication.Listeners.class)
	static class TwoFactoriesApplication {

		@Bean
		OrderedRetryContainerFactory transactional(OrderedRetryContainerFactoryConfigurer configurer) {
			OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
			configurer.configure(factory);
			factory.setDualWrite(DualWrite.TRANSACTION);
			factory.setDelays(List.of(Duration.ofSeconds(3)));
			return factory;
		}

		@Bean
		OrderedRetryContainerCustomizer recordingCustomizer() {
			return (container) -> customized.add(container.id());
		}

		static class Listeners {

			@OrderedRetryListener(id = "plain-listener", topics = "${test.topic}", delays = "1s", properties = {
					"max.poll.records=7",
					"interceptor.classes=io.github.kafkaresilience.it.ContainerFactoriesTests$RecordingInterceptor" })
			void plain(ConsumerRecord<String, String> record) {
				Script.forTopic(originalTopic(record)).handle(record);
			}

			@OrderedRetryListener(id = "tx-listener", topics = "${test.tx-topic}", containerFactory = "transactional")
			void transactional(ConsumerRecord<String, String> record) {
				Script.forTopic(originalTopic(record)).handle(record);
			}

			private static String originalTopic(ConsumerRecord<String, String> record) {
				String original = ProtocolHeaders.text(record.headers(), ProtocolHeaders.ORIGINAL_TOPIC);
				return (original != null) ? original : record.topic();
			}

		}

	}

	/** Remembers the settings of every consumer it is configured into. */
	public static class RecordingInterceptor implements ConsumerInterceptor<Object, Object> {

		static final List<Map<String, Object>> configs = new CopyOnWriteArrayList<>();

		@Override
		public void configure(Map<String, ?> config) {
			configs.add(new HashMap<>(config));
		}

		@Override
		public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
			return records;
		}

		@Override
		public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
		}

		@Override
		public void close() {
		}

	}

}
