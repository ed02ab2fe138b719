package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An application's own {@link ConsumerAwareRebalanceListener} bean composes with the
 * library's sync barrier: it is called on every assignment and revocation of the ordered
 * retry listener's partitions (main and retry topics), only after the barrier has paused
 * the assigned partitions, and the library still resumes them, across a rebalance between
 * two instances. With several such beans, the {@code @Primary} one is used. A listener
 * that throws does not keep the library from committing the partitions it gives up.
 */
@UsesSharedBroker
class RebalanceListenerCompositionTests {

	private static final int PARTITIONS = 3;

	@Test
	void theApplicationsListenerIsCalledBehindTheBarrierOnEveryRebalance() {
		String topic = SharedBroker.newTopic(PARTITIONS);
		Script script = Script.forTopic(topic);
		Set<TopicPartition> all = partitions(topic, Names.retry(topic, "1s"));
		try (ConfigurableApplicationContext first = TestApplication.start(ListeningApplication.class, topic,
				"kafka.resilience.retry.delays=1s", "kafka.resilience.instance-id=first-" + topic)) {
			RecordingRebalanceListener firstListener = first.getBean(RecordingRebalanceListener.class);
			await().atMost(Duration.ofSeconds(30)).until(() -> firstListener.owned().equals(all));
			sendOneToEachPartition(topic, "a");
			await().atMost(Duration.ofSeconds(30)).until(() -> handled(script, "a"));

			try (ConfigurableApplicationContext second = TestApplication.start(ListeningApplication.class, topic,
					"kafka.resilience.retry.delays=1s", "kafka.resilience.instance-id=second-" + topic)) {
				RecordingRebalanceListener secondListener = second.getBean(RecordingRebalanceListener.class);
				await().atMost(Duration.ofSeconds(30))
					.until(() -> !secondListener.owned().isEmpty() && !firstListener.owned().isEmpty()
							&& union(firstListener.owned(), secondListener.owned()).equals(all));
				sendOneToEachPartition(topic, "b");
				await().atMost(Duration.ofSeconds(30)).until(() -> handled(script, "b"));

				assertThat(firstListener.owned()).doesNotContainAnyElementsOf(secondListener.owned());
				assertCalledBehindTheBarrier(firstListener);
				assertCalledBehindTheBarrier(secondListener);
				assertThat(firstListener.events()).extracting(Event::kind)
					.containsSubsequence("assigned", "revoked-before-commit", "revoked-after-commit", "assigned");
			}
			// the second instance left: the first gets everything back, behind the
			// barrier again
			await().atMost(Duration.ofSeconds(30)).until(() -> firstListener.owned().equals(all));
			sendOneToEachPartition(topic, "c");
			await().atMost(Duration.ofSeconds(30)).until(() -> handled(script, "c"));
			assertCalledBehindTheBarrier(firstListener);
		}
	}

	@Test
	void withSeveralRebalanceListenerBeansThePrimaryOneIsCalled() {
		String topic = SharedBroker.newTopic(PARTITIONS);
		Script script = Script.forTopic(topic);
		try (ConfigurableApplicationContext context = TestApplication.start(TwoListenersApplication.class, topic,
				"kafka.resilience.retry.delays=1s")) {
			RecordingRebalanceListener primary = context.getBean("primaryListener", RecordingRebalanceListener.class);
			RecordingRebalanceListener other = context.getBean("otherListener", RecordingRebalanceListener.class);
			await().atMost(Duration.ofSeconds(30))
				.until(() -> primary.owned().equals(partitions(topic, Names.retry(topic, "1s"))));
			sendOneToEachPartition(topic, "a");
			await().atMost(Duration.ofSeconds(30)).until(() -> handled(script, "a"));
			assertCalledBehindTheBarrier(primary);
			assertThat(other.events()).isEmpty();
		}
	}

	@Test
	void aFailingApplicationListenerDoesNotKeepTheLibraryFromCommittingRevokedPartitions() {
		String topic = SharedBroker.newTopic(PARTITIONS);
		Script script = Script.forTopic(topic);
		Set<TopicPartition> all = partitions(topic, Names.retry(topic, "1s"));
		// offsets are committed only when partitions are revoked (or at shutdown)
		String[] properties = { "kafka.resilience.retry.delays=1s", "kafka.resilience.consumer.commit-interval=1h" };
		try (ConfigurableApplicationContext first = TestApplication.start(FailingListenerApplication.class, topic,
				with(properties, "kafka.resilience.instance-id=first-" + topic))) {
			RecordingRebalanceListener firstListener = first.getBean(RecordingRebalanceListener.class);
			await().atMost(Duration.ofSeconds(30)).until(() -> firstListener.owned().equals(all));
			sendOneToEachPartition(topic, "a");
			await().atMost(Duration.ofSeconds(30)).until(() -> handled(script, "a"));
			try (ConfigurableApplicationContext second = TestApplication.start(FailingListenerApplication.class, topic,
					with(properties, "kafka.resilience.instance-id=second-" + topic))) {
				RecordingRebalanceListener secondListener = second.getBean(RecordingRebalanceListener.class);
				await().atMost(Duration.ofSeconds(30))
					.until(() -> !secondListener.owned().isEmpty()
							&& union(firstListener.owned(), secondListener.owned()).equals(all));
				sendOneToEachPartition(topic, "b");
				await().atMost(Duration.ofSeconds(30)).until(() -> handled(script, "b"));
				assertThat(firstListener.events()).extracting(Event::kind).contains("revoked-before-commit");
				// the revoked offsets were committed: the new owner did not run the first
				// round again
				IntStream.range(0, PARTITIONS)
					.forEach((p) -> assertThat(script.attempts("a" + p)).as("a" + p).isEqualTo(1));
			}
		}
	}

	private static String[] with(String[] properties, String more) {
		String[] all = Arrays.copyOf(properties, properties.length + 1);
		all[properties.length] = more;
		return all;
	}

	/**
	 * At each assignment the library had paused every assigned partition before calling
	 * the application.
	 */
	private static void assertCalledBehindTheBarrier(RecordingRebalanceListener listener) {
		List<Event> assignments = listener.events()
			.stream()
			.filter((event) -> event.kind().equals("assigned"))
			.toList();
		assertThat(assignments).isNotEmpty()
			.allSatisfy((event) -> assertThat(event.paused()).containsAll(event.partitions()));
	}

	private static void sendOneToEachPartition(String topic, String round) {
		List<String[]> records = new ArrayList<>();
		IntStream.range(0, PARTITIONS)
			.forEach((p) -> records.add(new String[] { SharedBroker.keyIn(p, PARTITIONS, round), round + p }));
		SharedBroker.sendAll(topic, records);
	}

	private static boolean handled(Script script, String round) {
		return IntStream.range(0, PARTITIONS).allMatch((p) -> script.succeeded(round + p));
	}

	private static Set<TopicPartition> partitions(String... topics) {
		Set<TopicPartition> partitions = new HashSet<>();
		for (String topic : topics) {
			IntStream.range(0, PARTITIONS).forEach((p) -> partitions.add(new TopicPartition(topic, p)));
		}
		return partitions;
	}

	private static Set<TopicPartition> union(Set<TopicPartition> one, Set<TopicPartition> other) {
		Set<TopicPartition> union = new HashSet<>(one);
		union.addAll(other);
		return union;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class ListeningApplication {

		@Bean
		RecordingRebalanceListener rebalanceListener() {
			return new RecordingRebalanceListener();
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class TwoListenersApplication {

		@Bean
		@Primary
		RecordingRebalanceListener primaryListener() {
			return new RecordingRebalanceListener();
		}

		@Bean
		RecordingRebalanceListener otherListener() {
			return new RecordingRebalanceListener();
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(TestApplication.ScriptedListener.class)
	static class FailingListenerApplication {

		/** Records every call, then fails it. */
		@Bean
		RecordingRebalanceListener rebalanceListener() {
			return new RecordingRebalanceListener() {

				@Override
				public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
					super.onPartitionsAssigned(consumer, partitions);
					throw new IllegalStateException("the application's listener fails on assignment");
				}

				@Override
				public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer,
						Collection<TopicPartition> partitions) {
					super.onPartitionsRevokedBeforeCommit(consumer, partitions);
					throw new IllegalStateException("the application's listener fails on revocation");
				}

			};
		}

	}

	/**
	 * A rebalance callback, its partitions and, for an assignment, the partitions the
	 * consumer had paused when the application was called.
	 */
	record Event(String kind, Set<TopicPartition> partitions, Set<TopicPartition> paused) {
	}

	/**
	 * The application's listener: records every call, as an application tracking its
	 * partitions would.
	 */
	static class RecordingRebalanceListener implements ConsumerAwareRebalanceListener {

		private final List<Event> events = new CopyOnWriteArrayList<>();

		private final Set<TopicPartition> owned = ConcurrentHashMap.newKeySet();

		@Override
		public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
			this.events.add(new Event("assigned", Set.copyOf(partitions), Set.copyOf(consumer.paused())));
			this.owned.addAll(partitions);
		}

		@Override
		public void onPartitionsRevokedBeforeCommit(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
			this.events.add(new Event("revoked-before-commit", Set.copyOf(partitions), Set.of()));
		}

		@Override
		public void onPartitionsRevokedAfterCommit(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
			this.events.add(new Event("revoked-after-commit", Set.copyOf(partitions), Set.of()));
			this.owned.removeAll(partitions);
		}

		@Override
		public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
			this.events.add(new Event("lost", Set.copyOf(partitions), Set.of()));
			this.owned.removeAll(partitions);
		}

		List<Event> events() {
			return List.copyOf(this.events);
		}

		Set<TopicPartition> owned() {
			return Set.copyOf(this.owned);
		}

	}

}
