package io.github.kafkaresilience.internal.actuate;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;

/**
 * How many dead letters each dead-letter topic holds, from the earliest and latest
 * offsets of its partitions, read with an admin client of its own per call. When they
 * cannot be read, the overview says so in a word and the server log says why.
 */
public final class DeadLetterCounts {

	private static final Log logger = LogFactory.getLog(DeadLetterCounts.class);

	private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(10);

	private final Supplier<Admin> admins;

	public DeadLetterCounts(Supplier<Admin> admins) {
		this.admins = admins;
	}

	/** The dead letters of each topic. */
	public Map<String, KafkaResilienceEndpoint.DlqDescriptor> of(List<String> topics) {
		Map<String, KafkaResilienceEndpoint.DlqDescriptor> result = new HashMap<>();
		if (topics.isEmpty()) {
			return result;
		}
		try (Admin admin = this.admins.get()) {
			Map<String, TopicDescription> descriptions = admin.describeTopics(topics)
				.allTopicNames()
				.get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
			Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
			descriptions.forEach((topic, description) -> description.partitions().forEach((partition) -> {
				TopicPartition tp = new TopicPartition(topic, partition.partition());
				earliest.put(tp, OffsetSpec.earliest());
				latest.put(tp, OffsetSpec.latest());
			}));
			Map<TopicPartition, ListOffsetsResultInfo> first = admin.listOffsets(earliest)
				.all()
				.get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			Map<TopicPartition, ListOffsetsResultInfo> end = admin.listOffsets(latest)
				.all()
				.get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			for (String topic : descriptions.keySet()) {
				long held = 0;
				long written = 0;
				for (Map.Entry<TopicPartition, ListOffsetsResultInfo> entry : end.entrySet()) {
					if (entry.getKey().topic().equals(topic)) {
						held += entry.getValue().offset() - Objects.requireNonNull(first.get(entry.getKey())).offset();
						written += entry.getValue().offset();
					}
				}
				result.put(topic, new KafkaResilienceEndpoint.DlqDescriptor(held, written, null));
			}
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			logger.warn("Could not count the dead letters of " + topics + ": " + ex);
			topics.forEach(
					(topic) -> result.put(topic, new KafkaResilienceEndpoint.DlqDescriptor(null, null, "unavailable")));
		}
		return result;
	}

}
