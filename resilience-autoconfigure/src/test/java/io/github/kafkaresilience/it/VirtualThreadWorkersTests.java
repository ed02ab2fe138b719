package io.github.kafkaresilience.it;

import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.IntStream;

import io.github.kafkaresilience.OrderedRetryListener;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * On Java 21 or later a listener's workers can be virtual threads, a thousand of them:
 * every record runs on one, keys stay in order, and far more handlers wait at once than a
 * pool of platform threads would hold. On any Java, a handler runs with no monitor held
 * by the library around it, so that on a virtual thread it never pins its carrier (a
 * monitor is held the same way whatever the kind of thread; the JVM reports the monitors
 * of platform threads only, so that check runs on platform workers).
 */
@UsesSharedBroker
class VirtualThreadWorkersTests {

	private static final Log logger = LogFactory.getLog(VirtualThreadWorkersTests.class);

	/** Every handling, by main topic. */
	static final Map<String, Queue<Handling>> HANDLINGS = new ConcurrentHashMap<>();

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void aThousandVirtualWorkersKeepEveryKeyInOrder() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).withLatency(100);
		List<String[]> records = records(1_000, 5);
		// some records fail once: their keys take the ladder while the others run on
		for (int i = 0; i < records.size(); i += 97) {
			script.failTransiently(records.get(i)[1], 1);
		}
		try (ConfigurableApplicationContext context = TestApplication.start(ThreadRecordingApplication.class, topic,
				"kafka.resilience.consumer.virtual-threads=true", "kafka.resilience.consumer.concurrency=1000",
				"kafka.resilience.retry.delays=1s")) {
			SharedBroker.sendAll(topic, records);
			awaitInOrder(script, records, 1_000, 5);
			logger.info("At most " + script.mostRunningAtOnce() + " handlers ran at once on virtual workers");
			assertThat(script.sameKeyOverlaps()).as("handlings of one key that overlapped").isZero();
			assertThat(script.mostRunningAtOnce()).as("handlers that ran at once").isGreaterThan(100);
			assertThat(HANDLINGS.get(topic)).allSatisfy((handling) -> {
				assertThat(handling.virtual()).as("%s ran on a virtual thread", handling.thread()).isTrue();
				assertThat(handling.thread()).startsWith("kafka-resilience-it-" + topic + "-worker-");
			});
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				assertThat(OrderedRetryIntegrationTests.liveLocks(context, topic)).isZero();
				assertThat(IntStream.range(0, 3).mapToLong((p) -> SharedBroker.committed("g-" + topic, topic, p)).sum())
					.isEqualTo(records.size());
			});
		}
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void aThousandVirtualWorkersCommitTheirMovesInTransactions() {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).withLatency(20);
		List<String[]> records = records(200, 3);
		for (int i = 0; i < records.size(); i += 23) {
			script.failTransiently(records.get(i)[1], 1);
		}
		try (ConfigurableApplicationContext context = TestApplication.start(ThreadRecordingApplication.class, topic,
				"kafka.resilience.dual-write=transaction", "kafka.resilience.consumer.virtual-threads=true",
				"kafka.resilience.consumer.concurrency=1000", "kafka.resilience.retry.delays=1s")) {
			SharedBroker.sendAll(topic, records);
			awaitInOrder(script, records, 200, 3);
			assertThat(HANDLINGS.get(topic)).allSatisfy((handling) -> assertThat(handling.virtual()).isTrue());
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(OrderedRetryIntegrationTests.liveLocks(context, topic)).isZero());
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "compensate", "transaction" })
	void aHandlerRunsWithNoMonitorHeldAroundIt(String dualWrite) {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic);
		List<String[]> records = records(5, 4);
		script.failTransiently(records.get(0)[1], 1).failTransiently(records.get(7)[1], 1);
		try (ConfigurableApplicationContext context = TestApplication.start(ThreadRecordingApplication.class, topic,
				"kafka.resilience.dual-write=" + dualWrite, "kafka.resilience.consumer.virtual-threads=false",
				"kafka.resilience.consumer.concurrency=4", "kafka.resilience.retry.delays=1s")) {
			SharedBroker.sendAll(topic, records);
			awaitInOrder(script, records, 5, 4);
		}
		assertThat(HANDLINGS.get(topic)).as("handlings, the retries among them")
			.hasSizeGreaterThan(records.size())
			.allSatisfy((handling) -> assertThat(handling.monitors()).as("monitors held by %s", handling.thread())
				.isEmpty());
	}

	/** {@code perKey} records of each of {@code keys} keys, the keys interleaved. */
	private static List<String[]> records(int keys, int perKey) {
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < perKey; i++) {
			for (int k = 0; k < keys; k++) {
				records.add(new String[] { "k" + k, "k" + k + "-" + i });
			}
		}
		return records;
	}

	private static void awaitInOrder(Script script, List<String[]> records, int keys, int perKey) {
		await().atMost(Duration.ofSeconds(120))
			.until(() -> script.firstSuccessesByKey().values().stream().mapToInt(List::size).sum() == records.size());
		Map<String, List<String>> byKey = script.firstSuccessesByKey();
		for (int k = 0; k < keys; k++) {
			int key = k;
			assertThat(byKey.get("k" + k)).as("key k%d", k)
				.containsExactlyElementsOf(IntStream.range(0, perKey).mapToObj((i) -> "k" + key + "-" + i).toList());
		}
	}

	/**
	 * One handling of a record.
	 *
	 * @param thread the name of the thread it ran on
	 * @param virtual whether that thread was virtual
	 * @param monitors the monitors the thread held while the handler ran (platform
	 * threads only)
	 */
	record Handling(String thread, boolean virtual, List<String> monitors) {

		static Handling now() {
			Thread current = Thread.currentThread();
			boolean virtual = isVirtual(current);
			return new Handling(current.getName(), virtual, virtual ? List.of() : monitorsHeldBy(current));
		}

		/**
		 * {@code Thread.isVirtual()}, which the tests, compiled for Java 17, cannot name.
		 */
		private static boolean isVirtual(Thread thread) {
			try {
				return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
			}
			catch (NoSuchMethodException ex) {
				return false; // before Java 21
			}
			catch (ReflectiveOperationException ex) {
				throw new IllegalStateException(ex);
			}
		}

		@SuppressWarnings("deprecation") // Thread.threadId() is Java 19's
		private static List<String> monitorsHeldBy(Thread thread) {
			ThreadInfo info = ManagementFactory.getThreadMXBean()
				.getThreadInfo(new long[] { thread.getId() }, true, false)[0];
			List<String> monitors = new ArrayList<>();
			for (MonitorInfo monitor : info.getLockedMonitors()) {
				monitors.add(monitor.getClassName() + " locked in " + monitor.getLockedStackFrame());
			}
			return monitors;
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ThreadRecordingListener.class)
	static class ThreadRecordingApplication {

	}

	/** Notes the thread of every handling, then does what the topic's script says. */
	static class ThreadRecordingListener {

		@OrderedRetryListener(id = "it-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) {
			Header original = record.headers().lastHeader("original.topic");
			String topic = (original != null) ? new String(original.value()) : record.topic();
			HANDLINGS.computeIfAbsent(topic, (t) -> new ConcurrentLinkedQueue<>()).add(Handling.now());
			Script.forTopic(topic).handle(record);
		}

	}

}
