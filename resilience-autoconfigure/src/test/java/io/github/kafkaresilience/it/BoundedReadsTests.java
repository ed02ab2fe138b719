package io.github.kafkaresilience.it;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.kafkaresilience.internal.lock.Ownership;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Reads of a dead-letter topic over the endpoint are bounded: a listing of a DLQ of
 * 200,000 records, and a replay dry run, read up to the scan limit and say where they
 * stopped; and one ladder is read by one request at a time, a second answered 429 with
 * {@code Retry-After}.
 */
@UsesSharedBroker
class BoundedReadsTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final int PARTITIONS = 4;

	private static final int DEAD_LETTERS = 200_000;

	@Test
	void aDlqOf200000RecordsIsReadUpToTheScanLimitAndOneReadOfALadderRunsAtATime() throws Exception {
		String topic = SharedBroker.newTopic(PARTITIONS);
		String dlq = Names.dlq(topic);
		try (ConfigurableApplicationContext context = TestApplication.startWeb(SecuredApplication.class, topic,
				"management.endpoints.web.exposure.include=kafkaresilience", "kafka.resilience.console.enabled=true",
				"kafka.resilience.console.scan-limit=10000", "kafka.resilience.dlq-handler.enabled=false",
				"spring.kafka.consumer.properties.interceptor.classes=" + GatedLockReads.class.getName())) {
			writeDeadLetters(topic, dlq);
			ConsoleHttp ops = ConsoleHttp.logIn(context, "ops");
			ops.settings();
			String listing = "/actuator/kafkaresilience/dead-letters?listener=it-" + topic + "&topic=" + topic;
			String dryRun = "{\"from\":\"" + dlq + "\"}";

			// the first read is held while it reads, so that the second one meets it
			GatedLockReads.close(dlq);
			CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> get(ops, listing));
			await().atMost(WAIT).until(() -> GatedLockReads.held(dlq) > 0);
			HttpResponse<String> second = ops.get(listing);
			assertThat(second.statusCode()).isEqualTo(429);
			assertThat(second.headers().firstValue("Retry-After")).hasValue("5");
			assertThat(ops.post("/actuator/kafkaresilience", dryRun).statusCode()).as("a dry run reads the same ladder")
				.isEqualTo(429);
			GatedLockReads.open(dlq);

			HttpResponse<String> listed = first.get(WAIT.toSeconds(), TimeUnit.SECONDS);
			assertThat(listed.statusCode()).isEqualTo(200);
			Map<String, Object> page = ConsoleHttp.json(listed);
			assertThat(page).containsEntry("complete", false)
				.containsEntry("scanned", 10_000)
				.containsEntry("matched", 10_000);
			assertThat((List<?>) page.get("deadLetters")).hasSize(50);
			assertStoppedWithinTheTopic(page);

			HttpResponse<String> counted = ops.post("/actuator/kafkaresilience", dryRun);
			assertThat(counted.statusCode()).isEqualTo(200);
			Map<String, Object> report = ConsoleHttp.json(counted);
			assertThat(report).containsEntry("complete", false)
				.containsEntry("scanned", 10_000)
				.containsEntry("matched", 10_000);
			assertStoppedWithinTheTopic(report);
		}
		finally {
			GatedLockReads.open(dlq);
		}
	}

	/**
	 * Where a read stopped: in each partition (none was read to its end), the next offset
	 * it did not read; read from the beginning, they add up to the records read.
	 */
	@SuppressWarnings("unchecked")
	private static void assertStoppedWithinTheTopic(Map<String, Object> answer) {
		List<Map<String, Object>> stoppedAt = (List<Map<String, Object>>) answer.get("stoppedAt");
		assertThat(stoppedAt).extracting((at) -> at.get("partition")).containsExactly(0, 1, 2, 3);
		assertThat(stoppedAt).allSatisfy((at) -> assertThat(((Number) at.get("offset")).longValue()).isBetween(0L,
				(long) DEAD_LETTERS / PARTITIONS));
		assertThat(stoppedAt.stream().mapToLong((at) -> ((Number) at.get("offset")).longValue()).sum())
			.isEqualTo(10_000);
	}

	/**
	 * 200,000 small dead letters of the application's group, written at once by one
	 * producer.
	 */
	private static void writeDeadLetters(String topic, String dlq) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SharedBroker.bootstrapServers());
		config.put(ProducerConfig.LINGER_MS_CONFIG, 20);
		config.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
		byte[] group = Names.group(topic).getBytes(StandardCharsets.UTF_8);
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer())) {
			for (int i = 0; i < DEAD_LETTERS; i++) {
				ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(dlq, i % PARTITIONS, null,
						("k" + i).getBytes(StandardCharsets.UTF_8), ("v" + i).getBytes(StandardCharsets.UTF_8));
				record.headers().add(Ownership.HEADER, group);
				record.headers().add("dlq.reason", "exhausted".getBytes(StandardCharsets.UTF_8));
				producer.send(record);
			}
			producer.flush();
		}
	}

	private static HttpResponse<String> get(ConsoleHttp client, String path) {
		try {
			return client.get(path);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
