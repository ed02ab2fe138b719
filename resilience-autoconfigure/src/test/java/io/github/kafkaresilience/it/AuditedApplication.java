package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import java.util.concurrent.CompletableFuture;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.PermanentFailureException;
import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.messaging.handler.annotation.SendTo;

/**
 * An application whose handler decides from the record alone, so that every instance (in
 * this JVM or another) decides the same, and writes every attempt to an audit topic (one
 * partition, so its order is the order in which attempts finished).
 * <p>
 * A value {@code key:seq:rule} is handled by rule: {@code ok} succeeds, {@code tN} fails
 * transiently while its {@code retry.count} is below N, {@code p} fails permanently.
 * Where several consumer groups read one topic, a value may give each group its rule, as
 * in {@code key:seq:A=t2,C=p}: an instance follows the rule of its {@code test.label},
 * and succeeds where none is given. A dead letter sent back by a replay always succeeds,
 * as it would once the bug that failed it is fixed. While the file named by
 * {@code test.outage-file} exists, every attempt fails transiently, whatever its rule: a
 * dependency down for every key.
 * <p>
 * An audit line reads {@code value|topic|retryCount|ok or fail|instance|replay or -}; it
 * goes to {@code test.audit-topic}, by default {@code <topic>.audit}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ AuditedApplication.AuditedListener.class, AuditedApplication.AuditedBatchListener.class,
		AuditedApplication.AuditedAsyncListener.class, AuditedApplication.CrashPoint.class })
public class AuditedApplication {

	/** Runs one instance until it is killed: the entry point of a child JVM. */
	public static void main(String[] args) {
		new SpringApplicationBuilder(AuditedApplication.class).web(WebApplicationType.NONE).run(args);
	}

	static String auditTopic(String topic) {
		return topic + ".audit";
	}

	@ConditionalOnProperty(name = "test.batch", havingValue = "false", matchIfMissing = true)
	@ConditionalOnProperty(name = "test.async", havingValue = "none", matchIfMissing = true)
	static class AuditedListener {

		/** Long enough for a partition leader to move when its broker is killed. */
		private static final Duration AUDIT_DELIVERY_TIMEOUT = Duration.ofMinutes(2);

		private final KafkaProducer<String, String> audit;

		private final String instance;

		private final String topic;

		private final int maxLatencyMillis;

		private final String label;

		private final String auditTopic;

		/**
		 * While this file exists, every attempt fails: the dependency is down for every
		 * key.
		 */
		private final @Nullable Path outageFile;

		AuditedListener(@Value("${spring.kafka.bootstrap-servers}") String bootstrap,
				@Value("${kafka.resilience.instance-id}") String instance, @Value("${test.topic}") String topic,
				@Value("${test.max-latency-ms:0}") int maxLatencyMillis, @Value("${test.label:}") String label,
				@Value("${test.audit-topic:}") String auditTopic, @Value("${test.outage-file:}") String outageFile) {
			this.outageFile = outageFile.isEmpty() ? null : Path.of(outageFile);
			this.maxLatencyMillis = maxLatencyMillis;
			this.label = label;
			this.auditTopic = auditTopic.isEmpty() ? auditTopic(topic) : auditTopic;
			// acks=all and idempotent: an audit line survives a broker kill and is never
			// written twice
			this.audit = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
					ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
					ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) AUDIT_DELIVERY_TIMEOUT.toMillis()),
					new StringSerializer(), new StringSerializer());
			this.instance = instance;
			this.topic = topic;
		}

		@OrderedRetryListener(id = "audited-${test.topic}", topics = "${test.topic}")
		void handle(ConsumerRecord<String, String> record) throws Exception {
			if (this.maxLatencyMillis > 0) {
				// the handler's own work, as a test double: a random pause
				LockSupport.parkNanos(
						TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(this.maxLatencyMillis + 1)));
			}
			String count = ProtocolHeaders.text(record.headers(), ProtocolHeaders.RETRY_COUNT);
			int retryCount = (count != null && !record.topic().equals(this.topic)) ? Integer.parseInt(count) : 0;
			boolean replayed = record.headers().lastHeader(ProtocolHeaders.REPLAY_FROM_DLQ) != null;
			boolean outage = this.outageFile != null && Files.exists(this.outageFile);
			String rule = outage ? "outage" : replayed ? "ok" : rule(record.value(), this.label);
			boolean permanent = rule.equals("p");
			boolean fail = outage || permanent
					|| (rule.startsWith("t") && retryCount < Integer.parseInt(rule.substring(1)));
			String line = String.join("|", record.value(), record.topic(), Integer.toString(retryCount),
					fail ? "fail" : "ok", this.instance, replayed ? "replay" : "-");
			// waits longer than the delivery timeout: a send outliving a failover fails
			// by itself
			this.audit.send(new ProducerRecord<>(this.auditTopic, 0, record.key(), line))
				.get(AUDIT_DELIVERY_TIMEOUT.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
			if (permanent) {
				throw new PermanentFailureException("rule p: " + record.value());
			}
			if (fail) {
				throw new IllegalStateException("rule " + rule + " at retry.count " + retryCount);
			}
		}

	}

	/**
	 * The same rules for a listener whose result completes later ({@code test.async}): a
	 * {@code CompletableFuture} completed on another thread ({@code future}), a
	 * {@code Mono} subscribed on Reactor's bounded elastic scheduler ({@code mono}), or a
	 * Kotlin {@code suspend} function ({@code suspend}, {@code AuditedSuspendListener});
	 * the attempt (its audit line and its outcome) happens when the result completes.
	 * With {@code reply}, a method that returns once done and replies {@code re:<value>}
	 * to {@code <topic>.replies} ({@code @SendTo}).
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty("test.async")
	static class AuditedAsyncListener {

		/** Completes the futures, as a client library's I/O threads would. */
		private static final Executor completer = Executors.newFixedThreadPool(4);

		/**
		 * The attempts, not a bean: its own method would be registered as a listener too.
		 */
		private final AuditedListener attempts;

		AuditedAsyncListener(@Value("${spring.kafka.bootstrap-servers}") String bootstrap,
				@Value("${kafka.resilience.instance-id}") String instance, @Value("${test.topic}") String topic,
				@Value("${test.max-latency-ms:0}") int maxLatencyMillis) {
			this.attempts = new AuditedListener(bootstrap, instance, topic, maxLatencyMillis, "", "", "");
		}

		@Bean
		@ConditionalOnProperty(name = "test.async", havingValue = "future")
		FutureListener futureListener() {
			return new FutureListener(this.attempts);
		}

		@Bean
		@ConditionalOnProperty(name = "test.async", havingValue = "mono")
		MonoListener monoListener() {
			return new MonoListener(this.attempts);
		}

		@Bean
		@ConditionalOnProperty(name = "test.async", havingValue = "suspend")
		AuditedSuspendListener suspendListener() {
			return new AuditedSuspendListener((record) -> attempt(this.attempts, record));
		}

		@Bean
		@ConditionalOnProperty(name = "test.async", havingValue = "reply")
		ReplyingListener replyingListener() {
			return new ReplyingListener(this.attempts);
		}

		static void attempt(AuditedListener attempts, ConsumerRecord<String, String> record) {
			try {
				attempts.handle(record);
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}

		record FutureListener(AuditedListener attempts) {

			@OrderedRetryListener(id = "audited-${test.topic}", topics = "${test.topic}")
			CompletableFuture<Void> handle(ConsumerRecord<String, String> record) {
				return CompletableFuture.runAsync(() -> attempt(this.attempts, record),
						CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS, completer));
			}

		}

		/**
		 * Replies {@code re:<value>} to {@code <topic>.replies} once an attempt
		 * succeeded.
		 */
		record ReplyingListener(AuditedListener attempts) {

			@OrderedRetryListener(id = "audited-${test.topic}", topics = "${test.topic}")
			@SendTo("${test.topic}.replies")
			String handle(ConsumerRecord<String, String> record) {
				attempt(this.attempts, record);
				return "re:" + record.value();
			}

		}

		record MonoListener(AuditedListener attempts) {

			@OrderedRetryListener(id = "audited-${test.topic}", topics = "${test.topic}")
			Mono<Void> handle(ConsumerRecord<String, String> record) {
				return Mono.fromRunnable(() -> attempt(this.attempts, record))
					.subscribeOn(Schedulers.boundedElastic())
					.then();
			}

		}

	}

	/**
	 * The same rules for a batch listener ({@code test.batch=true}), standing for one
	 * bulk write per batch. With {@code test.batch-style=index} it audits the records it
	 * got to and names the first failing record by its index; with {@code whole} a batch
	 * with a failing record fails as a whole and audits nothing (its bulk write is rolled
	 * back), unless it holds that record alone, which it audits as failed.
	 */
	@ConditionalOnProperty(name = "test.batch", havingValue = "true")
	static class AuditedBatchListener {

		private final KafkaProducer<String, String> audit;

		private final String instance;

		private final String topic;

		private final boolean byIndex;

		AuditedBatchListener(@Value("${spring.kafka.bootstrap-servers}") String bootstrap,
				@Value("${kafka.resilience.instance-id}") String instance, @Value("${test.topic}") String topic,
				@Value("${test.batch-style:index}") String style) {
			this.audit = new KafkaProducer<>(
					Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all",
							ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true),
					new StringSerializer(), new StringSerializer());
			this.instance = instance;
			this.topic = topic;
			this.byIndex = style.equals("index");
		}

		@OrderedRetryListener(id = "audited-${test.topic}", topics = "${test.topic}", batch = "true")
		void handle(List<ConsumerRecord<String, String>> records) throws Exception {
			List<String> lines = new ArrayList<>();
			for (int i = 0; i < records.size(); i++) {
				ConsumerRecord<String, String> record = records.get(i);
				String count = ProtocolHeaders.text(record.headers(), ProtocolHeaders.RETRY_COUNT);
				int retryCount = (count != null && !record.topic().equals(this.topic)) ? Integer.parseInt(count) : 0;
				boolean replayed = record.headers().lastHeader(ProtocolHeaders.REPLAY_FROM_DLQ) != null;
				String rule = replayed ? "ok" : rule(record.value(), "");
				boolean permanent = rule.equals("p");
				boolean fail = permanent || (rule.startsWith("t") && retryCount < Integer.parseInt(rule.substring(1)));
				String line = String.join("|", record.key() + "=" + record.value(), record.topic(),
						Integer.toString(retryCount), fail ? "fail" : "ok", this.instance, replayed ? "replay" : "-");
				if (!fail) {
					lines.add(line);
					continue;
				}
				Exception failure = permanent ? new PermanentFailureException("rule p: " + record.value())
						: new IllegalStateException("rule " + rule + " at retry.count " + retryCount);
				if (this.byIndex || records.size() == 1) {
					lines.add(line);
					write(lines);
					if (records.size() == 1 && !this.byIndex) {
						throw failure;
					}
					throw new BatchListenerFailedException("record " + i + " failed", failure, i);
				}
				throw failure; // the batch's bulk write is rolled back: nothing of it is
								// audited
			}
			write(lines);
		}

		private void write(List<String> lines) throws Exception {
			List<Future<?>> sent = new ArrayList<>();
			for (String line : lines) {
				String key = line.substring(0, line.indexOf('='));
				sent.add(this.audit
					.send(new ProducerRecord<>(auditTopic(this.topic), 0, key, line.substring(key.length() + 1))));
			}
			for (Future<?> future : sent) {
				future.get(2, TimeUnit.MINUTES);
			}
		}

	}

	/**
	 * The rule of a value ({@code key:seq:rule}) for the instances labelled
	 * {@code label}: the rule itself, or where it names groups ({@code A=t2,C=p}) the one
	 * given to the label, {@code ok} when none is.
	 */
	static String rule(String value, String label) {
		String rule = value.substring(value.lastIndexOf(':') + 1);
		if (!rule.contains("=")) {
			return rule;
		}
		for (String labelled : rule.split(",")) {
			if (labelled.startsWith(label + "=")) {
				return labelled.substring(label.length() + 1);
			}
		}
		return "ok";
	}

	/**
	 * With {@code test.crash-at} (a {@link FaultInjection.Point}) and
	 * {@code test.crash-value} set, the JVM halts at that point of the move of the record
	 * with that value: a crash between two steps, with no shutdown hook, commit or undo.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty("test.crash-at")
	static class CrashPoint {

		@Bean
		OrderedRetryComponentFactory crashPoint(@Value("${test.crash-at}") FaultInjection.Point crashAt,
				@Value("${test.crash-value}") String value) {
			return Faults.injecting((point, record) -> {
				if (point == crashAt && value.equals(new String(record.value(), StandardCharsets.UTF_8))) {
					Runtime.getRuntime().halt(137);
				}
			});
		}

	}

	/**
	 * One line of the audit topic.
	 *
	 * @param replayed whether the record handled was a dead letter sent back by a replay
	 */
	record Audit(String key, String value, String topic, int retryCount, boolean ok, String instance,
			boolean replayed) {

		static Audit parse(ConsumerRecord<byte[], byte[]> record) {
			String[] parts = new String(record.value(), StandardCharsets.UTF_8).split("\\|");
			return new Audit(new String(record.key(), StandardCharsets.UTF_8), parts[0], parts[1],
					Integer.parseInt(parts[2]), parts[3].equals("ok"), parts[4],
					parts.length > 5 && parts[5].equals("replay"));
		}

	}

}
