package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.kafkaresilience.AttemptTimeoutException;
import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.listener.BatchListenerFailedException;

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static io.github.kafkaresilience.it.OrderedRetryLadderTests.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Listener methods whose result completes later: a {@code CompletableFuture}, a
 * {@code CompletionStage} and a {@code Mono}, completed on another thread, and a Kotlin
 * {@code suspend} function ({@code SuspendListener}, compiled by the Kotlin Maven
 * plugin), record by record and in batches (a batch's failed result names its failed
 * record). An attempt ends when its result completes; a failed result retries its record
 * along the ladder in its key's order, and no worker is held while results are pending.
 */
@UsesSharedBroker
class AsyncListenerTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** Completes the listeners' results, as a client library's I/O thread would. */
	static final ScheduledExecutorService completer = Executors.newScheduledThreadPool(2, (runnable) -> {
		Thread thread = new Thread(runnable, "test-completer");
		thread.setDaemon(true);
		return thread;
	});

	/** How long each result takes to complete. */
	static volatile long completeAfterMillis = 20;

	/**
	 * Results pending now, the most pending at once, and how often one key had two
	 * pending.
	 */
	static final AtomicInteger pending = new AtomicInteger();

	static final AtomicInteger mostPending = new AtomicInteger();

	static final AtomicInteger sameKeyOverlaps = new AtomicInteger();

	static final Map<String, AtomicInteger> pendingByKey = new ConcurrentHashMap<>();

	/**
	 * When set, the future listener's results start their wait only once this many are
	 * pending at once ({@link #gate}), so that reaching them does not depend on the
	 * machine's speed.
	 */
	static volatile int gateAt;

	static final CompletableFuture<Void> gate = new CompletableFuture<>();

	/** The values whose first attempt returns a result that never completes. */
	static final Map<String, AtomicInteger> hangs = new ConcurrentHashMap<>();

	@AfterAll
	static void stopCompleter() {
		completer.shutdownNow();
	}

	@ParameterizedTest
	@ValueSource(strings = { "future", "stage", "mono", "suspend", "batch-future", "batch-mono", "batch-suspend" })
	void failedResultsRetryInTheirKeysOrderAndAnExhaustedOneIsDeadLettered(String kind) {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", Integer.MAX_VALUE).failTransiently("X", 1);
		try (ConfigurableApplicationContext context = start(kind, topic, "kafka.resilience.retry.delays=1s,2s",
				"kafka.resilience.retry.max-attempts=3")) {
			SharedBroker.send(topic, "k", "A");
			SharedBroker.send(topic, "k", "B");
			SharedBroker.send(topic, "k", "C");
			SharedBroker.send(topic, "j", "X");
			SharedBroker.send(topic, "j", "Y");
			SharedBroker.send(topic, "i", "Z");
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(script.firstSuccesses("k")).containsExactly("B", "C");
				assertThat(script.firstSuccesses("j")).containsExactly("X", "Y");
				assertThat(script.firstSuccesses("i")).containsExactly("Z");
			});
			assertThat(script.attempts("A")).isEqualTo(3);
			assertThat(script.journal().stream().filter((a) -> a.key().equals("k")).map(Script.Attempt::value).toList())
				.containsExactly("A", "A", "A", "B", "C");
			assertThat(script.journal().stream().filter((a) -> a.key().equals("j")).map(Script.Attempt::topic).toList())
				.as("Y follows X into the ladder")
				.containsExactly(topic, Names.retry(topic, "1s"), Names.retry(topic, "1s"));
			await().atMost(WAIT).untilAsserted(() -> assertThat(SharedBroker.readAll(Names.dlq(topic))).hasSize(1));
			ConsumerRecord<byte[], byte[]> dead = SharedBroker.readAll(Names.dlq(topic)).get(0);
			assertThat(new String(dead.value())).isEqualTo("A");
			assertThat(headers(dead)).containsEntry("retry.count", "3")
				.containsEntry("error.class", "transient")
				.containsEntry("error.exception", IllegalStateException.class.getName())
				.containsEntry("error.message", "attempt 3 of A fails")
				.containsEntry("previous.topic", Names.retry(topic, "2s"))
				.containsEntry("original.topic", topic)
				.containsEntry("dlq.reason", "exhausted");
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
			assertThat(sameKeyOverlaps).as("a key's next record waits until its result completed").hasValue(0);
		}
	}

	@Test
	void aResultThatNeverCompletesFailsItsAttemptAfterTheAttemptTimeoutAndTheKeyMovesOn() {
		String topic = SharedBroker.newTopic(1);
		Script script = Script.forTopic(topic);
		hangs.put("HANG", new AtomicInteger(1));
		try (ConfigurableApplicationContext context = start("future", topic, "kafka.resilience.retry.delays=1s",
				"kafka.resilience.consumer.attempt-timeout=500ms")) {
			SharedBroker.send(topic, "h", "HANG");
			SharedBroker.send(topic, "h", "AFTER");
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(script.firstSuccesses("h")).containsExactly("HANG", "AFTER"));
			ConsumerRecord<byte[], byte[]> retry = SharedBroker.readAll(Names.retry(topic, "1s")).get(0);
			assertThat(new String(retry.value())).isEqualTo("HANG");
			assertThat(headers(retry)).containsEntry("error.exception", AttemptTimeoutException.class.getName())
				.containsEntry("retry.count", "1");
			assertThat(headers(retry).get("error.message"))
				.contains("did not complete within the attempt timeout of PT0.5S");
			await().atMost(WAIT).until(() -> liveLocks(context, topic) == 0);
		}
	}

	@Test
	void fiveThousandKeysWaitOnTheirResultsAtOnceOnFourWorkers() {
		String topic = SharedBroker.newTopic(1);
		int keys = 5_000;
		List<String[]> records = new ArrayList<>();
		for (int i = 0; i < keys; i++) {
			records.add(new String[] { "key-" + i, "v-" + i });
		}
		SharedBroker.sendAll(topic, records);
		Script script = Script.forTopic(topic);
		completeAfterMillis = 200;
		mostPending.set(0);
		// no result starts its 200 ms before all 5,000 are pending: a library that cannot
		// have them
		// all in flight at once never opens the gate
		gateAt = keys;
		try (ConfigurableApplicationContext context = start("future", topic, "kafka.resilience.consumer.concurrency=4",
				"kafka.resilience.consumer.max-in-flight-per-partition=" + keys,
				"spring.kafka.consumer.max-poll-records=" + keys,
				"management.endpoints.web.exposure.include=kafkaresilience")) {
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			AtomicInteger mostShown = new AtomicInteger();
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(gate)
					.as("all %,d results pending at once (the most " + "so far: %,d)", keys, mostPending.get())
					.isDone());
			await().atMost(WAIT).until(() -> {
				Integer shown = endpoint.resilience().listeners().get(0).pendingResults();
				mostShown.accumulateAndGet((shown != null) ? shown : -1, Math::max);
				return script.journal().size() == keys;
			});
			assertThat(mostPending.get()).as("results pending at once").isEqualTo(keys);
			assertThat(mostShown.get()).as("pending results the endpoint showed at most").isPositive();
			long workers = Thread.getAllStackTraces()
				.keySet()
				.stream()
				.filter((thread) -> thread.getName().startsWith("kafka-resilience-async-" + topic + "-worker"))
				.count();
			assertThat(workers).as("worker threads").isBetween(1L, 4L);
			assertThat(sameKeyOverlaps).hasValue(0);
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(endpoint.resilience().listeners().get(0).pendingResults()).isZero());
			assertThat(script.journal()).allMatch(Script.Attempt::succeeded);
		}
		finally {
			completeAfterMillis = 20;
			gateAt = 0;
		}
	}

	static ConfigurableApplicationContext start(String kind, String topic, String... properties) {
		Class<?> application = switch (kind) {
			case "future" -> FutureApplication.class;
			case "stage" -> StageApplication.class;
			case "mono" -> MonoApplication.class;
			case "suspend" -> SuspendApplication.class;
			case "batch-future" -> FutureBatchApplication.class;
			case "batch-mono" -> MonoBatchApplication.class;
			case "batch-suspend" -> SuspendBatchApplication.class;
			default -> throw new IllegalArgumentException(kind);
		};
		return TestApplication.start(application, topic, properties);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(FutureListener.class)
	static class FutureApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(StageListener.class)
	static class StageApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(MonoListener.class)
	static class MonoApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(SuspendListener.class)
	static class SuspendApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(FutureBatchListener.class)
	static class FutureBatchApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(MonoBatchListener.class)
	static class MonoBatchApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(SuspendBatchListener.class)
	static class SuspendBatchApplication {

	}

	static class FutureListener {

		@OrderedRetryListener(id = "async-${test.topic}", topics = "${test.topic}")
		CompletableFuture<Void> future(ConsumerRecord<String, String> record) {
			CompletableFuture<Void> result = new CompletableFuture<>();
			AtomicInteger hang = hangs.get(record.value());
			if (hang != null && hang.getAndDecrement() > 0) {
				return result; // never completes
			}
			String key = called(record);
			Runnable complete = () -> completer.schedule(() -> {
				try {
					handle(record, key);
					result.complete(null);
				}
				catch (RuntimeException ex) {
					result.completeExceptionally(ex);
				}
			}, completeAfterMillis, TimeUnit.MILLISECONDS);
			if (gateAt > 0) {
				gate.thenRun(complete);
			}
			else {
				complete.run();
			}
			return result;
		}

	}

	static class StageListener {

		@OrderedRetryListener(id = "async-${test.topic}", topics = "${test.topic}")
		CompletionStage<String> stage(ConsumerRecord<String, String> record) {
			String key = called(record);
			return CompletableFuture.supplyAsync(() -> {
				handle(record, key);
				return record.value();
			}, CompletableFuture.delayedExecutor(completeAfterMillis, TimeUnit.MILLISECONDS, completer));
		}

	}

	static class MonoListener {

		@OrderedRetryListener(id = "async-${test.topic}", topics = "${test.topic}")
		Mono<Void> mono(ConsumerRecord<String, String> record) {
			String key = called(record);
			return Mono.delay(Duration.ofMillis(completeAfterMillis)).doOnNext((tick) -> handle(record, key)).then();
		}

	}

	/** A batch listener whose result is a future another thread completes. */
	static class FutureBatchListener {

		@OrderedRetryListener(id = "async-${test.topic}", topics = "${test.topic}", batch = "true")
		CompletableFuture<Void> future(List<ConsumerRecord<String, String>> records) {
			List<String> keys = calledBatch(records);
			CompletableFuture<Void> result = new CompletableFuture<>();
			completer.schedule(() -> {
				try {
					handleBatch(records, keys);
					result.complete(null);
				}
				catch (RuntimeException ex) {
					result.completeExceptionally(ex);
				}
			}, completeAfterMillis, TimeUnit.MILLISECONDS);
			return result;
		}

	}

	static class MonoBatchListener {

		@OrderedRetryListener(id = "async-${test.topic}", topics = "${test.topic}", batch = "true")
		Mono<Void> mono(List<ConsumerRecord<String, String>> records) {
			List<String> keys = calledBatch(records);
			return Mono.delay(Duration.ofMillis(completeAfterMillis))
				.doOnNext((tick) -> handleBatch(records, keys))
				.then();
		}

	}

	/**
	 * A batch was called: each of its keys has one more call pending (a key's records may
	 * ride together in one batch, never in two batches at once).
	 */
	static List<String> calledBatch(List<ConsumerRecord<String, String>> records) {
		List<String> keys = records.stream().map((record) -> String.valueOf(record.key())).distinct().toList();
		for (String key : keys) {
			if (pendingByKey.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet() > 1) {
				sameKeyOverlaps.incrementAndGet();
			}
		}
		mostPending.accumulateAndGet(pending.addAndGet(records.size()), Math::max);
		return keys;
	}

	/**
	 * Completes a batch's result: the script handles its records in order, and a record
	 * it fails is named, the records after it not run.
	 */
	static void handleBatch(List<ConsumerRecord<String, String>> records, List<String> keys) {
		try {
			for (ConsumerRecord<String, String> record : records) {
				try {
					Script
						.forTopic(record.headers().lastHeader("original.topic") != null
								? new String(record.headers().lastHeader("original.topic").value()) : record.topic())
						.handle(record);
				}
				catch (RuntimeException ex) {
					throw new BatchListenerFailedException("failed " + record.value(), ex, record);
				}
			}
		}
		finally {
			keys.forEach((key) -> pendingByKey.get(key).decrementAndGet());
			pending.addAndGet(-records.size());
		}
	}

	/** A result was asked for: its key has one more pending. */
	static String called(ConsumerRecord<String, String> record) {
		String key = String.valueOf(record.key());
		if (pendingByKey.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet() > 1) {
			sameKeyOverlaps.incrementAndGet();
		}
		int most = mostPending.accumulateAndGet(pending.incrementAndGet(), Math::max);
		if (gateAt > 0 && most >= gateAt) {
			gate.complete(null);
		}
		return key;
	}

	/** Completes a result: the script handles the record, and may fail it. */
	static void handle(ConsumerRecord<String, String> record, String key) {
		try {
			Script
				.forTopic(record.headers().lastHeader("original.topic") != null
						? new String(record.headers().lastHeader("original.topic").value()) : record.topic())
				.handle(record);
		}
		finally {
			pendingByKey.get(key).decrementAndGet();
			pending.decrementAndGet();
		}
	}

}
