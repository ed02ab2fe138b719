package com.example.payments;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code replay} command line, run from the packaged jar against a real broker that
 * holds dead letters:
 * {@code java -jar sample-app.jar replay --from ... --to ... [--group ...] [filters]}.
 * The dead letters go back into the sample listener's own ladder, never to the main
 * topic.
 */
class ReplayCommandIT {

	private static EmbeddedKafkaKraftBroker broker;

	@BeforeAll
	static void startBroker() {
		broker = new EmbeddedKafkaKraftBroker(1, 3);
		broker.afterPropertiesSet();
	}

	@AfterAll
	static void stopBroker() {
		broker.destroy();
	}

	@Test
	void aDryRunCountsTheMatchingDeadLettersAndARealRunSendsThemBackIntoTheGroupsLadder() throws Exception {
		String main = PaymentsSampleApplication.TOPIC;
		String dlq = PaymentsSampleApplication.DEAD_LETTER_TOPIC;
		String stage1 = PaymentsSampleApplication.GROUP + "." + main + ".retry.2s";
		createTopics(main, dlq, stage1);
		sendDeadLetter(dlq, "k1", "k1-3", "transient", "exhausted", 0, 2, PaymentsSampleApplication.GROUP);
		sendDeadLetter(dlq, "k2", "k2-1", "permanent", "permanent", 1, 0, PaymentsSampleApplication.GROUP);
		sendDeadLetter(dlq, "k3", "k3-7", "transient", "exhausted", 2, 6, PaymentsSampleApplication.GROUP);
		sendDeadLetter(dlq, "k4", "k4-1", "transient", "exhausted", 2, 9, "another-service");

		// 'payments' is read by two groups (the payments listener's and the ledger's):
		// the command
		// refuses to guess whose ladder is meant
		Run ambiguous = replay("--from", dlq, "--to", main, "--dry-run");
		assertThat(ambiguous.status()).as(ambiguous.output()).isEqualTo(2);
		assertThat(ambiguous.output()).contains("name the consumer group whose ladder is meant");

		Run dryRun = replay("--from", dlq, "--to", main, "--group", PaymentsSampleApplication.GROUP, "--since", "1h",
				"--error-class", "transient", "--dry-run");
		assertThat(dryRun.status()).as(dryRun.output()).isZero();
		assertThat(dryRun.output()).contains("into '" + stage1 + "'")
			.contains("scanned 4 (1 of another group, skipped), matched 2, published nothing (dry run)");
		assertThat(read(stage1)).isEmpty();

		Run real = replay("--from", dlq, "--to", main, "--group", PaymentsSampleApplication.GROUP,
				"--error-class=transient");
		assertThat(real.status()).as(real.output()).isZero();
		assertThat(real.output()).contains("matched 2, published 2");
		Map<String, Integer> deadLetterPartitions = new HashMap<>();
		read(dlq).forEach((record) -> deadLetterPartitions.put(record.value(), record.partition()));
		List<ConsumerRecord<String, String>> replayed = read(stage1);
		assertThat(replayed).extracting(ConsumerRecord::value).containsExactlyInAnyOrder("k1-3", "k3-7");
		assertThat(replayed).allSatisfy((record) -> {
			assertThat(header(record, "retry.count")).isEqualTo("0");
			assertThat(header(record, "replay.from-dlq")).startsWith(dlq + "/");
			assertThat(header(record, "original.topic")).isEqualTo(main);
			assertThat(header(record, "owner.group")).isEqualTo(PaymentsSampleApplication.GROUP);
			assertThat(header(record, "trace-id")).isEqualTo("trace-" + record.key());
			assertThat(record.headers().lastHeader("dlq.reason")).isNull();
			// back into the partition of its key, where it was dead-lettered
			assertThat(record.partition()).isEqualTo(deadLetterPartitions.get(record.value()));
		});
		assertThat(read(main)).as("a replay never writes to the main topic other groups read").isEmpty();
	}

	@Test
	void badArgumentsExitWithStatus2AndTheUsage() throws Exception {
		Run run = replay("--from", "x.dlq", "--to", "x", "--error-class", "sometimes");
		assertThat(run.status()).isEqualTo(2);
		assertThat(run.output()).contains("--error-class 'sometimes' is not one of [transient, permanent]");

		Run unknown = replay("--from", "x.dlq", "--to", "x", "--colour", "red");
		assertThat(unknown.status()).isEqualTo(2);
		assertThat(unknown.output()).contains("Unknown option --colour").contains("Usage: java -jar");
	}

	private record Run(int status, String output) {
	}

	private static Run replay(String... args) throws Exception {
		String java = ProcessHandle.current().info().command().orElse("java");
		List<String> command = new ArrayList<>(List.of(java, "-jar", jar(), "replay"));
		command.addAll(List.of(args));
		command.add("--spring.kafka.bootstrap-servers=" + broker.getBrokersAsString());
		command.add("--logging.level.root=warn");
		Path output = Files.createTempFile("replay", ".log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
		assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("the replay command did not end").isTrue();
		String text = Files.readString(output);
		Files.delete(output);
		return new Run(process.exitValue(), text);
	}

	private static String jar() {
		String jar = System.getProperty("sample.jar");
		assertThat(jar).as("sample.jar is set by the failsafe plugin").isNotNull();
		assertThat(new File(jar)).exists();
		return jar;
	}

	private static void createTopics(String... topics) throws Exception {
		try (Admin admin = Admin
			.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString()))) {
			admin.createTopics(List.of(topics).stream().map((topic) -> new NewTopic(topic, 3, (short) 1)).toList())
				.all()
				.get(30, TimeUnit.SECONDS);
		}
	}

	private static void sendDeadLetter(String dlq, String key, String value, String errorClass, String reason,
			int originalPartition, long originalOffset, String owner) throws Exception {
		RecordHeaders headers = new RecordHeaders();
		add(headers, "trace-id", "trace-" + key);
		add(headers, "original.topic", PaymentsSampleApplication.TOPIC);
		add(headers, "owner.group", owner);
		add(headers, "original.partition", Integer.toString(originalPartition));
		add(headers, "original.offset", Long.toString(originalOffset));
		add(headers, "retry.count", "3");
		add(headers, "error.class", errorClass);
		add(headers, "error.exception", "java.lang.IllegalStateException");
		add(headers, "dlq.reason", reason);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString()), new StringSerializer(),
				new StringSerializer())) {
			producer.send(new ProducerRecord<>(dlq, null, key, value, headers)).get(30, TimeUnit.SECONDS);
		}
	}

	private static void add(RecordHeaders headers, String name, String value) {
		headers.add(name, value.getBytes(StandardCharsets.UTF_8));
	}

	private static String header(ConsumerRecord<String, String> record, String name) {
		return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
	}

	/** Every record of the topic, read to its end. */
	private static List<ConsumerRecord<String, String>> read(String topic) {
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
				Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString()), new StringDeserializer(),
				new StringDeserializer())) {
			List<TopicPartition> partitions = consumer.partitionsFor(topic)
				.stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
			List<ConsumerRecord<String, String>> records = new ArrayList<>();
			while (partitions.stream().anyMatch((tp) -> consumer.position(tp) < end.get(tp))) {
				consumer.poll(Duration.ofMillis(200)).forEach(records::add);
			}
			return records;
		}
	}

}
