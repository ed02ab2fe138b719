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
import io.github.kafkaresilience.actuate.KafkaResilienceEndpoint;
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

import static io.github.kafkaresilience.it.OrderedRetryIntegrationTests.liveLocks;
import static io.github.kafkaresilience.it.OrderedRetryLadderTests.headers;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Listener methods whose result completes later: a {@code CompletableFuture}, a
 * {@code CompletionStage} and a {@code Mono}, completed on another thread, and a Kotlin
 * {@code suspend} function ({@code SuspendListener}, compiled by the Kotlin Maven plugin). An attempt ends when
 * its result completes; a failed result retries its record along the ladder in its key's
 * order, and no worker is held while results are pending.
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

	/** Results pending now, the most pending at once, and how often one key had two pending. */
	static final AtomicInteger pending = new AtomicInteger();

	static final AtomicInteger mostPending = new AtomicInteger();

	static final AtomicInteger sameKeyOverlaps = new AtomicInteger();

	static final Map<String, AtomicInteger> pendingByKey = new ConcurrentHashMap<>();

	/** The values whose first attempt returns a result that never completes. */
	static final Map<String, AtomicInteger> hangs = new ConcurrentHashMap<>();

	@AfterAll
	static void stopCompleter() {
		completer.shutdownNow();
	}

	@ParameterizedTest
	@ValueSource(strings = { "future", "stage", "mono", "suspend" })
	void failedResultsRetryInTheirKeysOrderAndAnExhaustedOneIsDeadLettered(String kind) {
		String topic = SharedBroker.newTopic(3);
		Script script = Script.forTopic(topic).failTransiently("A", Integer.MAX_VALUE).failTransiently("X", 1);
		try (ConfigurableApplicationContext context = start(kind, topic,
				"kafka.resilience.retry.delays=1s,2s", "kafka.resilience.retry.max-attempts=3")) {
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
				.as("Y follows X into the ladder").containsExactly(topic, Names.retry(topic, "1s"), Names.retry(topic, "1s"));
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
		try (ConfigurableApplicationContext context = start("future", topic,
				"kafka.resilience.retry.delays=1s", "kafka.resilience.consumer.attempt-timeout=500ms")) {
			SharedBroker.send(topic, "h", "HANG");
			SharedBroker.send(topic, "h", "AFTER");
			await().atMost(WAIT).untilAsserted(() -> assertThat(script.firstSuccesses("h")).containsExactly("HANG", "AFTER"));
			ConsumerRecord<byte[], byte[]> retry = SharedBroker.readAll(Names.retry(topic, "1s")).get(0);
			assertThat(new String(retry.value())).isEqualTo("HANG");
			assertThat(headers(retry)).containsEntry("error.exception", AttemptTimeoutException.class.getName())
				.containsEntry("retry.count", "1");
			assertThat(headers(retry).get("error.message")).contains("did not complete within the attempt timeout of PT0.5S");
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
		try (ConfigurableApplicationContext context = start("future", topic,
				"kafka.resilience.consumer.concurrency=4",
				"kafka.resilience.consumer.max-in-flight-per-partition=" + keys,
				"spring.kafka.consumer.max-poll-records=" + keys,
				"management.endpoints.web.exposure.include=kafkaresilience")) {
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			AtomicInteger mostShown = new AtomicInteger();
			await().atMost(WAIT).until(() -> {
				Integer shown = endpoint.resilience().listeners().get(0).pendingResults();
				mostShown.accumulateAndGet((shown != null) ? shown : -1, Math::max);
				return script.journal().size() == keys;
			});
			assertThat(mostPending.get()).as("results pending at once").isEqualTo(keys);
			assertThat(mostShown.get()).as("pending results the endpoint showed at most").isPositive();
			long workers = Thread.getAllStackTraces().keySet().stream()
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
		}
	}

	static ConfigurableApplicationContext start(String kind, String topic, String... properties) {
		Class<?> application = switch (kind) {
			case "future" -> FutureApplication.class;
			case "stage" -> StageApplication.class;
			case "mono" -> MonoApplication.class;
			case "suspend" -> SuspendApplication.class;
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

	static class FutureListener {

		@OrderedRetryListener(id = "async-${test.topic}", topics = "${test.topic}")
		CompletableFuture<Void> future(ConsumerRecord<String, String> record) {
			CompletableFuture<Void> result = new CompletableFuture<>();
			AtomicInteger hang = hangs.get(record.value());
			if (hang != null && hang.getAndDecrement() > 0) {
				return result; // never completes
			}
			String key = called(record);
			completer.schedule(() -> {
				try {
					handle(record, key);
					result.complete(null);
				}
				catch (RuntimeException ex) {
					result.completeExceptionally(ex);
				}
			}, completeAfterMillis, TimeUnit.MILLISECONDS);
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

	/** A result was asked for: its key has one more pending. */
	static String called(ConsumerRecord<String, String> record) {
		String key = String.valueOf(record.key());
		if (pendingByKey.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet() > 1) {
			sameKeyOverlaps.incrementAndGet();
		}
		mostPending.accumulateAndGet(pending.incrementAndGet(), Math::max);
		return key;
	}

	/** Completes a result: the script handles the record, and may fail it. */
	static void handle(ConsumerRecord<String, String> record, String key) {
		try {
			Script.forTopic(record.headers().lastHeader("original.topic") != null
					? new String(record.headers().lastHeader("original.topic").value()) : record.topic())
				.handle(record);
		}
		finally {
			pendingByKey.get(key).decrementAndGet();
			pending.decrementAndGet();
		}
	}

}
