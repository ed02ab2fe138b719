package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.listener.BatchListenerFailedException;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Batch listeners: a batch holds records that may run now, and each record's outcome is
 * its own, whether the method names its failed record or fails as a whole.
 */
@UsesSharedBroker
class BatchListenerTests {

	private static final Duration WAIT = Duration.ofSeconds(90);

	/**
	 * Values whose marker makes them fail: F on the main topic only, X always, P
	 * permanently.
	 */
	private static final Map<String, String> MARKED = Map.of("k1-2", "F", "k4-0", "F", "k6-7", "F", "k2-3", "X", "k5-1",
			"P");

	@Test
	void recordsNamedByIndexKeepTheirKeysOrderAndOnlyTheirKeysWait() {
		ladderKeepsOrder(Style.INDEX);
	}

	@Test
	void batchesThatFailAsAWholeAreBisectedAndKeepEveryKeysOrder() {
		ladderKeepsOrder(Style.WHOLE);
	}

	@Test
	void inTransactionModeEachRecordsStepJoinsTheOpenTransactionAndTheOrderHolds() {
		ladderKeepsOrder(Style.INDEX, "kafka.resilience.dual-write=transaction");
	}

	private void ladderKeepsOrder(Style style, String... more) {
		String topic = SharedBroker.newTopic(3);
		Journal journal = Journal.forTopic(topic, style);
		List<String> properties = new ArrayList<>(List.of("kafka.resilience.retry.delays=1s,2s",
				"kafka.resilience.retry.max-attempts=3", "kafka.resilience.consumer.batch-size=20"));
		properties.addAll(List.of(more));
		try (ConfigurableApplicationContext context = TestApplication.start(BatchApplication.class, topic,
				properties.toArray(String[]::new))) {
			List<String[]> records = new ArrayList<>();
			for (int i = 0; i < 12; i++) {
				for (int k = 0; k < 8; k++) {
					String value = "k" + k + "-" + i;
					records.add(new String[] { "k" + k, MARKED.getOrDefault(value, "") + value });
				}
			}
			SharedBroker.sendAll(topic, records);
			Map<String, List<String>> expected = records.stream()
				.filter((r) -> !r[1].startsWith("X") && !r[1].startsWith("P"))
				.collect(Collectors.groupingBy((r) -> r[0], Collectors.mapping((r) -> r[1], Collectors.toList())));
			await().atMost(WAIT).untilAsserted(() -> assertThat(journal.firstSuccessesByKey()).isEqualTo(expected));
			await().atMost(WAIT).untilAsserted(() -> assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(2));
			Map<String, Map<String, String>> dead = SharedBroker.readAll(Names.dlq(topic))
				.stream()
				.collect(Collectors.toMap((r) -> new String(r.value()), OrderedRetryLadderTests::headers));
			assertThat(dead.get("Xk2-3")).containsEntry("dlq.reason", "exhausted")
				.containsEntry("retry.count", "3")
				.containsEntry("error.class", "transient")
				.containsEntry("error.exception", IllegalStateException.class.getName())
				.containsEntry("original.topic", topic)
				.containsEntry("previous.topic", Names.retry(topic, "2s"));
			assertThat(dead.get("Pk5-1")).containsEntry("dlq.reason", "permanent")
				.containsEntry("error.class", "permanent")
				.containsEntry("retry.count", "1")
				.containsEntry("previous.topic", topic);
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
			assertThat(journal.batchSizes()).as("records ran in batches")
				.anyMatch((size) -> size > 1)
				.allMatch((size) -> size <= 20);
			assertThat(journal.outOfOrderInOneBatch()).as("batches that held records of one key out of order").isZero();
		}
	}

	@Test
	void aBacklogOfAThousandRecordsRunsInBatchesOfManyRecords() {
		String topic = SharedBroker.newTopic(3);
		Journal journal = Journal.forTopic(topic, Style.INDEX);
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			for (int k = 0; k < 250; k++) {
				records.add(new String[] { "b" + k, "b" + k + "-" + i });
			}
		}
		try (ConfigurableApplicationContext context = TestApplication.start(BatchApplication.class, topic,
				"test.autostartup=false")) {
			SharedBroker.sendAll(topic, records); // a backlog when the listener starts
			context.getBean(ListenerRegistry.class).start("batch-" + topic);
			await().atMost(WAIT).until(() -> journal.successes() == 1000);
			List<Integer> sizes = journal.batchSizes();
			assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(1000);
			assertThat(sizes).as("batch sizes %s", sizes).hasSizeLessThanOrEqualTo(100);
			assertThat(sizes.stream().mapToInt(Integer::intValue).max().getAsInt()).as("batch sizes %s", sizes)
				.isGreaterThanOrEqualTo(50);
			journal.firstSuccessesByKey()
				.forEach((key, values) -> assertThat(values).containsExactly(key + "-0", key + "-1", key + "-2",
						key + "-3"));
		}
	}

	@Test
	void aBacklogOfFewKeysRunsInBatchesThatCarryManyRecordsOfEachKeyInOrder() {
		String topic = SharedBroker.newTopic(3);
		Journal journal = Journal.forTopic(topic, Style.INDEX);
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			for (int k = 0; k < 5; k++) {
				records.add(new String[] { "f" + k, "f" + k + "-" + i });
			}
		}
		try (ConfigurableApplicationContext context = TestApplication.start(BatchApplication.class, topic,
				"test.autostartup=false")) {
			SharedBroker.sendAll(topic, records); // a backlog of 5 keys when the listener
													// starts
			context.getBean(ListenerRegistry.class).start("batch-" + topic);
			await().atMost(WAIT).until(() -> journal.successes() == 1000);
			List<Integer> sizes = journal.batchSizes();
			assertThat(sizes.stream().mapToInt(Integer::intValue).sum()).isEqualTo(1000);
			// one record of each key per batch would take at least 200 calls
			assertThat(sizes).as("batch sizes %s", sizes).hasSizeLessThanOrEqualTo(100);
			assertThat(sizes.stream().mapToInt(Integer::intValue).max().getAsInt()).as("batch sizes %s", sizes)
				.isGreaterThanOrEqualTo(50);
			assertThat(journal.sameKeyInOneBatch()).as("batches that held several records of one key").isPositive();
			assertThat(journal.outOfOrderInOneBatch()).as("batches that held records of one key out of order").isZero();
			List<String> inOrder = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				inOrder.add("%s-" + i);
			}
			journal.firstSuccessesByKey()
				.forEach((key, values) -> assertThat(values)
					.containsExactlyElementsOf(inOrder.stream().map((value) -> value.formatted(key)).toList()));
		}
	}

	@Test
	void aBatchThatFailsBecauseOfOneRecordSendsOnlyThatRecordsKeyIntoTheLadder() {
		String topic = SharedBroker.newTopic(1);
		Journal journal = Journal.forTopic(topic, Style.WHOLE);
		List<String[]> records = new ArrayList<>();
		for (int k = 0; k < 16; k++) {
			records.add(new String[] { "s" + k, ((k == 11) ? "F" : "") + "s" + k });
		}
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		try (ConfigurableApplicationContext context = TestApplication.start(BatchApplication.class, topic,
				"kafka.resilience.retry.delays=1s", "kafka.resilience.consumer.batch-size=16",
				// a batch waits until it is full: the 16 records run as one
				"kafka.resilience.consumer.batch-wait=5s", "test.autostartup=false")) {
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(meters));
			SharedBroker.sendAll(topic, records); // one poll's worth when the listener
													// starts
			context.getBean(ListenerRegistry.class).start("batch-" + topic);
			await().atMost(WAIT).until(() -> journal.successes() == 16);
			assertThat(journal.batchSizes()).as("the first batch held all 16").startsWith(16);
			assertThat(SharedBroker.readAll(Names.retry(topic, "1s"))).singleElement()
				.satisfies((retry) -> assertThat(new String(retry.key())).isEqualTo("s11"));
			assertThat(attempts(meters, topic, "0", "failure")).isEqualTo(1);
			assertThat(attempts(meters, topic, "0", "success")).isEqualTo(15);
			assertThat(attempts(meters, topic, "1", "success")).isEqualTo(1);
			assertThat(meters.get("kafka.resilience.batch.bisections").tag("topic", topic).counter().count())
				.as("16 records halved down to the failing one")
				.isEqualTo(4);
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	private static double attempts(MeterRegistry meters, String topic, String stage, String outcome) {
		return meters.find("kafka.resilience.attempts")
			.tag("topic", topic)
			.tag("stage", stage)
			.tag("outcome", outcome)
			.counters()
			.stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	enum Style {

		/** The method names the failed record by its index. */
		INDEX,

		/** The method fails as a whole, naming no record. */
		WHOLE

	}

	/**
	 * What a topic's batch listener did: its batches, and the records of the calls that
	 * succeeded.
	 */
	static final class Journal {

		private static final Map<String, Journal> journals = new ConcurrentHashMap<>();

		private final String topic;

		private final Style style;

		private final List<Integer> batchSizes = new CopyOnWriteArrayList<>();

		private final List<String[]> successes = new CopyOnWriteArrayList<>();

		private volatile int sameKeyInOneBatch;

		private volatile int outOfOrderInOneBatch;

		private Journal(String topic, Style style) {
			this.topic = topic;
			this.style = style;
		}

		static Journal forTopic(String topic, Style style) {
			Journal journal = new Journal(topic, style);
			journals.put(topic, journal);
			return journal;
		}

		static Journal of(String topic) {
			return journals.get(topic);
		}

		void run(List<ConsumerRecord<String, String>> records) {
			this.batchSizes.add(records.size());
			if (records.stream().map(ConsumerRecord::key).distinct().count() < records.size()) {
				this.sameKeyInOneBatch++;
			}
			Map<String, ConsumerRecord<String, String>> last = new HashMap<>();
			for (ConsumerRecord<String, String> record : records) {
				ConsumerRecord<String, String> before = last.put(record.key(), record);
				if (before != null && (!before.topic().equals(record.topic())
						|| before.partition() != record.partition() || before.offset() >= record.offset())) {
					this.outOfOrderInOneBatch++; // records of one key ride in a batch
													// only in their partition's order
				}
			}
			List<String[]> done = new ArrayList<>();
			for (int i = 0; i < records.size(); i++) {
				ConsumerRecord<String, String> record = records.get(i);
				String value = record.value();
				RuntimeException failure = null;
				if (value.startsWith("P")) {
					failure = new PermanentFailureException("cannot handle " + value);
				}
				else if (value.startsWith("X") || (value.startsWith("F") && record.topic().equals(this.topic))) {
					failure = new IllegalStateException(value + " fails on " + record.topic());
				}
				if (failure != null) {
					if (this.style == Style.INDEX) {
						this.successes.addAll(done); // the records before it succeeded
						throw new BatchListenerFailedException("record " + i + " failed", failure, i);
					}
					throw failure; // the bulk write of the whole batch is rolled back
				}
				done.add(new String[] { record.key(), value });
			}
			this.successes.addAll(done);
		}

		List<Integer> batchSizes() {
			return List.copyOf(this.batchSizes);
		}

		int sameKeyInOneBatch() {
			return this.sameKeyInOneBatch;
		}

		int outOfOrderInOneBatch() {
			return this.outOfOrderInOneBatch;
		}

		long successes() {
			return this.successes.stream().map((s) -> s[1]).distinct().count();
		}

		/** Every key's values in the order of their first success. */
		Map<String, List<String>> firstSuccessesByKey() {
			return this.successes.stream()
				.collect(Collectors.groupingBy((s) -> s[0], Collectors.mapping((s) -> s[1], Collectors
					.collectingAndThen(Collectors.toList(), (list) -> list.stream().distinct().toList()))));
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(BatchListener.class)
	static class BatchApplication {

	}

	static class BatchListener {

		private final String topic;

		BatchListener(@Value("${test.topic}") String topic) {
			this.topic = topic;
		}

		@OrderedRetryListener(id = "batch-${test.topic}", topics = "${test.topic}", batch = "true",
				autoStartup = "${test.autostartup:true}")
		void handle(List<ConsumerRecord<String, String>> records) {
			Journal.of(this.topic).run(records);
		}

	}

}
