package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tenants and rate limits on a real broker, as a multi-tenant service sees them: a
 * tenant's flood in a partition leaves another tenant of the same partition its calm
 * latency, with every key in order and commits that never pass a record not handled; a
 * rate limit holds records in the queue, not on a worker, and two instances that share
 * one stay within it together.
 */
@UsesSharedBroker
class FairShareTests {

	private static final Log logger = LogFactory.getLog(FairShareTests.class);

	private static final Duration SECOND = Duration.ofSeconds(1);

	private KafkaProducer<byte[], byte[]> producer;

	private ScheduledExecutorService timer;

	@BeforeEach
	void setUp() {
		Journal.current = new Journal();
		this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
				SharedBroker.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 5), new ByteArraySerializer(),
				new ByteArraySerializer());
		this.timer = Executors.newSingleThreadScheduledExecutor();
	}

	@AfterEach
	void tearDown() {
		this.timer.shutdownNow();
		this.producer.close();
	}

	@Test
	void aTenantFloodingAPartitionLeavesAnotherTenantOfItItsCalmLatencyInOrderWithContiguousCommits() throws Exception {
		String topic = SharedBroker.newTopic(1);
		Journal journal = Journal.current;
		try (ConfigurableApplicationContext context = TestApplication.start(FairApplication.class, topic)) {
			RetryContainer container = context.getBean(ListenerRegistry.class).container("fair-" + topic);
			await().atMost(Duration.ofSeconds(30)).until(() -> mainPartitions(container, topic) == 1);
			List<Sent> warmUp = sendPaced(topic, "w", 1, 1, Duration.ZERO, 0);
			await().atMost(Duration.ofSeconds(30)).until(() -> journal.handledOf(warmUp) == 1);
			// calm: tenant B alone, 10 records a second
			List<Sent> calm = sendPaced(topic, "b", 5, 20, Duration.ofMillis(100), 0);
			await().atMost(Duration.ofSeconds(30)).until(() -> journal.handledOf(calm) == calm.size());
			long calmWorst = journal.worstLatency(calm);

			// tenant A sends 20,000 records at once, while B goes on at 10 a second
			long floodStart = System.currentTimeMillis();
			List<Sent> flood = sendAll(topic, "a", 200, 20_000);
			List<Sent> during = new CopyOnWriteArrayList<>();
			AtomicInteger next = new AtomicInteger(20);
			this.timer.scheduleAtFixedRate(() -> {
				if (journal.handledOf(flood) < flood.size()) {
					int n = next.getAndIncrement();
					during.add(send(topic, "b", "b-" + (n % 5), n / 5));
				}
			}, 0, 100, TimeUnit.MILLISECONDS);

			List<String> passedUnhandled = new ArrayList<>();
			await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() -> {
				long committed = SharedBroker.committed("g-" + topic, topic, 0);
				Set<Long> handled = journal.offsets(0);
				for (long offset = 0; offset < committed; offset++) {
					if (!handled.contains(offset)) {
						passedUnhandled.add("committed " + committed + " past unhandled offset " + offset);
						break;
					}
				}
				return journal.handledOf(flood) == flood.size();
			});
			long drained = System.currentTimeMillis() - floodStart;
			this.timer.shutdown();
			assertThat(this.timer.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
			await().atMost(Duration.ofSeconds(30)).until(() -> journal.handledOf(during) == during.size());

			long bound = Math.max(5 * calmWorst, 500);
			long floodWorst = journal.worstLatency(during);
			logger.info(
					"Tenant A's 20,000 records drained in " + drained + " ms; tenant B's worst latency was " + calmWorst
							+ " ms calm and " + floodWorst + " ms over " + during.size() + " records during the flood");
			assertThat(drained).as("the flood lasts long enough for waiting behind it to show")
				.isGreaterThan(4 * bound);
			assertThat(during).as("B sent records while A drained").hasSizeGreaterThan(10);
			assertThat(floodWorst).as("B's worst latency during A's flood, against its calm bound").isLessThan(bound);
			assertThat(passedUnhandled).as("commits passing a record not handled").isEmpty();
			List<Sent> all = new ArrayList<>(warmUp);
			all.addAll(calm);
			all.addAll(flood);
			all.addAll(during);
			assertThat(journal.byKey()).as("every key's records, handled once each in order")
				.isEqualTo(Sent.byKey(all));
			await().atMost(Duration.ofSeconds(30))
				.until(() -> SharedBroker.committed("g-" + topic, topic, 0) == all.size());
		}
	}

	@Test
	void aTenantAtItsRateLimitWaitsInTheQueueWhileAnotherRunsOnTheOnlyWorker() {
		String topic = SharedBroker.newTopic(1);
		Journal journal = Journal.current;
		try (ConfigurableApplicationContext context = TestApplication.start(OneWorkerApplication.class, topic,
				"kafka.resilience.tenants.rate-limits.a=20")) {
			RetryContainer container = context.getBean(ListenerRegistry.class).container("one-" + topic);
			await().atMost(Duration.ofSeconds(30)).until(() -> !container.assignment().isEmpty());
			List<Sent> limited = sendAll(topic, "a", 10, 100);
			List<Sent> free = sendAll(topic, "b", 10, 50);
			await().atMost(Duration.ofSeconds(30)).until(() -> journal.handledOf(free) == free.size());
			int limitedByThen = journal.handledOf(limited);
			logger.info("Tenant B's 50 records were handled while tenant A, limited to 20 a second, had "
					+ limitedByThen + " of its 100 handled");
			assertThat(limitedByThen).as("A's records handled once B's were, on the listener's one worker")
				.isLessThan(60);
			await().atMost(Duration.ofSeconds(30)).until(() -> journal.handledOf(limited) == limited.size());
			// a twentieth of a second apart, and one at once after an idle spell
			assertThat(journal.mostInAnySecond("a")).as("A's records handled in any second").isLessThanOrEqualTo(22);
			List<Sent> all = new ArrayList<>(limited);
			all.addAll(free);
			assertThat(journal.byKey()).isEqualTo(Sent.byKey(all));
		}
	}

	@Test
	void aListenersRateLimitHoldsInAnySecondOnOneInstanceAndSharedByTwo() {
		String topic = SharedBroker.newTopic(4);
		Journal journal = Journal.current;
		String[] shared = { "kafka.resilience.rate-limit.shared=true",
				"spring.kafka.consumer.properties.partition.assignment.strategy="
						+ "org.apache.kafka.clients.consumer.CooperativeStickyAssignor" };
		try (ConfigurableApplicationContext first = TestApplication.start(LimitedApplication.class, topic,
				with(shared, "kafka.resilience.instance-id=limited-1"))) {
			RetryContainer one = first.getBean(ListenerRegistry.class).container("limited-" + topic);
			await().atMost(Duration.ofSeconds(30)).until(() -> mainPartitions(one, topic) == 4);
			assertThat(one.fairShare().rateLimit()).as("alone, it has the whole limit").isEqualTo(200.0);
			List<Sent> alone = sendAll(topic, "t", 40, 600);
			await().atMost(Duration.ofSeconds(30)).until(() -> journal.handledOf(alone) == alone.size());
			int mostAlone = journal.mostInAnySecond("t");
			double rateAlone = journal.rate("t");

			try (ConfigurableApplicationContext second = TestApplication.start(LimitedApplication.class, topic,
					with(shared, "kafka.resilience.instance-id=limited-2"))) {
				RetryContainer two = second.getBean(ListenerRegistry.class).container("limited-" + topic);
				await().atMost(Duration.ofSeconds(60))
					.until(() -> mainPartitions(one, topic) == 2 && mainPartitions(two, topic) == 2
							&& one.fairShare().rateLimit() + two.fairShare().rateLimit() == 200.0);
				assertThat(one.fairShare().rateLimit() + two.fairShare().rateLimit()).as("their shares")
					.isEqualTo(200.0);
				Journal.current = new Journal();
				Journal together = Journal.current;
				List<Sent> both = sendAll(topic, "u", 40, 1_000);
				await().atMost(Duration.ofSeconds(60)).until(() -> together.handledOf(both) == both.size());
				int mostTogether = together.mostInAnySecond("u");
				logger.info("A listener limited to 200 records a second handled at most " + mostAlone
						+ " in any second (" + Math.round(rateAlone) + " a second on average) alone, and at most "
						+ mostTogether + " in any second on two instances sharing the limit, " + together.instances()
						+ " of which handled records");
				// the limit, one caught up after an idle spell, and one for the time
				// between
				// a record's turn and its call, on each instance
				assertThat(mostAlone).as("in any second, alone").isLessThanOrEqualTo(203);
				assertThat(rateAlone).as("the rate alone").isGreaterThan(150);
				assertThat(mostTogether).as("in any second, on the two instances together").isLessThanOrEqualTo(206);
				assertThat(together.instances()).as("instances that handled records").isEqualTo(2);
				assertThat(together.byKey()).isEqualTo(Sent.byKey(both));
			}
		}
	}

	private static long mainPartitions(RetryContainer container, String topic) {
		return container.assignment().stream().filter((partition) -> partition.topic().equals(topic)).count();
	}

	private static String[] with(String[] properties, String more) {
		String[] all = Arrays.copyOf(properties, properties.length + 1);
		all[properties.length] = more;
		return all;
	}

	/** Sends {@code count} records of a tenant round robin over its keys, at once. */
	private List<Sent> sendAll(String topic, String tenant, int keys, int count) {
		List<Sent> sent = new ArrayList<>();
		for (int n = 0; n < count; n++) {
			sent.add(sendAsync(topic, tenant, tenant + "-" + (n % keys), n / keys));
		}
		this.producer.flush();
		return sent;
	}

	/** Sends records of a tenant one by one, {@code every} apart. */
	private List<Sent> sendPaced(String topic, String tenant, int keys, int count, Duration every, int from) {
		List<Sent> sent = new ArrayList<>();
		for (int n = from; n < from + count; n++) {
			sent.add(send(topic, tenant, tenant + "-" + (n % keys), n / keys));
			LockSupport.parkNanos(every.toNanos()); // the pace of the sender, not a wait
													// for a result
		}
		return sent;
	}

	private Sent send(String topic, String tenant, String key, int sequence) {
		Sent sent = sendAsync(topic, tenant, key, sequence);
		this.producer.flush();
		return sent;
	}

	private Sent sendAsync(String topic, String tenant, String key, int sequence) {
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
				(key + ":" + sequence).getBytes(StandardCharsets.UTF_8));
		record.headers().add("tenant", tenant.getBytes(StandardCharsets.UTF_8));
		this.producer.send(record);
		return new Sent(tenant, key, key + ":" + sequence);
	}

	/** A record sent: its tenant, key and value. */
	record Sent(String tenant, String key, String value) {

		static Map<String, List<String>> byKey(List<Sent> sent) {
			Map<String, List<String>> byKey = new HashMap<>();
			sent.forEach((record) -> byKey.computeIfAbsent(record.key(), (k) -> new ArrayList<>()).add(record.value()));
			return byKey;
		}

	}

	/** What the listeners handled, in the order they handled it, and when. */
	static final class Journal {

		static volatile Journal current = new Journal();

		private final Map<String, List<String>> byKey = new ConcurrentHashMap<>();

		private final Map<String, Long> latencies = new ConcurrentHashMap<>();

		private final Map<Integer, Set<Long>> offsets = new ConcurrentHashMap<>();

		private final Map<String, List<Long>> handledNanos = new ConcurrentHashMap<>();

		private final Set<String> instances = ConcurrentHashMap.newKeySet();

		void handled(ConsumerRecord<String, String> record, String instance) {
			long now = System.currentTimeMillis();
			Header tenant = record.headers().lastHeader("tenant");
			String tenantName = new String(tenant.value(), StandardCharsets.UTF_8);
			this.handledNanos.computeIfAbsent(tenantName, (t) -> new CopyOnWriteArrayList<>()).add(System.nanoTime());
			this.byKey.computeIfAbsent(record.key(), (k) -> new CopyOnWriteArrayList<>()).add(record.value());
			this.latencies.put(record.value(), now - record.timestamp());
			this.offsets.computeIfAbsent(record.partition(), (p) -> ConcurrentHashMap.newKeySet()).add(record.offset());
			this.instances.add(instance);
		}

		int handledOf(List<Sent> sent) {
			int handled = 0;
			for (Sent record : sent) {
				if (this.latencies.containsKey(record.value())) {
					handled++;
				}
			}
			return handled;
		}

		long worstLatency(List<Sent> sent) {
			long worst = 0;
			for (Sent record : sent) {
				worst = Math.max(worst, this.latencies.getOrDefault(record.value(), Long.MAX_VALUE));
			}
			return worst;
		}

		Set<Long> offsets(int partition) {
			return Set.copyOf(this.offsets.getOrDefault(partition, Set.of()));
		}

		Map<String, List<String>> byKey() {
			Map<String, List<String>> copy = new LinkedHashMap<>();
			this.byKey.forEach((key, values) -> copy.put(key, List.copyOf(values)));
			return copy;
		}

		/** The most records of a tenant handled in any one second. */
		int mostInAnySecond(String tenant) {
			long[] times = this.handledNanos.getOrDefault(tenant, List.of())
				.stream()
				.mapToLong(Long::longValue)
				.sorted()
				.toArray();
			int most = 0;
			for (int from = 0, to = 0; from < times.length; from++) {
				while (to < times.length && times[to] - times[from] < SECOND.toNanos()) {
					to++;
				}
				most = Math.max(most, to - from);
			}
			return most;
		}

		/** The records of a tenant handled a second, from its first to its last. */
		double rate(String tenant) {
			List<Long> times = this.handledNanos.getOrDefault(tenant, List.of());
			long first = times.stream().mapToLong(Long::longValue).min().orElse(0);
			long last = times.stream().mapToLong(Long::longValue).max().orElse(0);
			return (times.size() - 1) * 1e9 / Math.max(1, last - first);
		}

		int instances() {
			return this.instances.size();
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(FairListener.class)
	static class FairApplication {

	}

	static class FairListener {

		@OrderedRetryListener(id = "fair-${test.topic}", topics = "${test.topic}", tenantHeader = "tenant",
				concurrency = "4")
		void handle(ConsumerRecord<String, String> record) {
			LockSupport.parkNanos(Duration.ofMillis(2).toNanos()); // the handler's own
																	// work, as a test
																	// double
			Journal.current.handled(record, "one");
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OneWorkerListener.class)
	static class OneWorkerApplication {

	}

	static class OneWorkerListener {

		@OrderedRetryListener(id = "one-${test.topic}", topics = "${test.topic}", tenantHeader = "tenant",
				concurrency = "1")
		void handle(ConsumerRecord<String, String> record) {
			Journal.current.handled(record, "one");
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(LimitedListener.class)
	static class LimitedApplication {

	}

	static class LimitedListener {

		private final String instance;

		LimitedListener(Environment environment) {
			this.instance = environment.getProperty("kafka.resilience.instance-id", "");
		}

		@OrderedRetryListener(id = "limited-${test.topic}", topics = "${test.topic}", rateLimit = "200",
				concurrency = "8")
		void handle(ConsumerRecord<String, String> record) {
			Journal.current.handled(record, this.instance);
		}

	}

}
