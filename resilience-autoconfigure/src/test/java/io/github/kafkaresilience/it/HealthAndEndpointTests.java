package io.github.kafkaresilience.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.internal.actuate.KafkaResilienceEndpoint;
import io.github.kafkaresilience.internal.actuate.ResilienceHealthIndicator;
import io.github.kafkaresilience.dlq.ReplayReport;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The health indicator and the {@code kafkaresilience} endpoint on a real broker.
 */
@UsesSharedBroker
class HealthAndEndpointTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@Test
	void healthIsUpOnlyOnceTheLockViewCaughtUpAndTheEndpointListsAStuckKeyWithItsStageAndAge() throws Exception {
		String topic = SharedBroker.newTopic(3);
		String lockTopic = Names.locks(topic);
		// a lock topic with a record to read, whose reads the test holds back
		SharedBroker.createTopic(lockTopic, 3, Map.of("cleanup.policy", "compact"));
		SharedBroker.send(new ProducerRecord<>(lockTopic, 0, "some-old-lock".getBytes(), null));
		GatedLockReads.close(lockTopic);
		Script.forTopic(topic).failTransiently("V-stuck", Integer.MAX_VALUE);
		// the startup check of the ladder's owners would wait for the lock view the test
		// holds back:
		// without it the application starts at once and reports the view as loading
		try (ConfigurableApplicationContext context = TestApplication.start(topic,
				"spring.kafka.consumer.properties.interceptor.classes=" + GatedLockReads.class.getName(),
				"kafka.resilience.retry.delays=10m", "management.endpoints.web.exposure.include=kafkaresilience",
				"kafka.resilience.topics.check-owner-at-startup=false")) {
			ResilienceHealthIndicator health = context.getBean(ResilienceHealthIndicator.class);
			await().atMost(WAIT).until(() -> GatedLockReads.held(lockTopic) > 0);

			Health loading = health.health(true);
			assertThat(loading.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
			assertThat(loading.getDetails()).containsEntry("lockViews", Map.of(lockTopic, "loading"));

			GatedLockReads.open(lockTopic);
			await().atMost(WAIT).until(() -> health.health(true).getStatus().equals(Status.UP));
			assertThat(health.health(true).getDetails()).containsEntry("lockViews", Map.of(lockTopic, "current"))
				.doesNotContainKey("warnings");

			SharedBroker.send(topic, "ok", "V-ok");
			SharedBroker.send(topic, "stuck", "V-stuck");
			KafkaResilienceEndpoint endpoint = context.getBean(KafkaResilienceEndpoint.class);
			// locked, and its move to stage 1 confirmed
			await().atMost(WAIT).until(() -> settledLocks(endpoint) == 1);

			Map<String, Object> json = JSON.readValue(JSON.writeValueAsString(endpoint.resilience()), Map.class);
			Map<String, Object> listener = only(json.get("listeners"));
			assertThat(listener).containsEntry("id", "it-" + topic)
				.containsEntry("group", "g-" + topic)
				.containsEntry("running", true)
				// its records have no tenants, and it has no rate limit
				.containsEntry("tenants", null)
				.containsEntry("rateLimit", null);
			Map<String, Object> main = only(listener.get("topics"));
			assertThat(main).containsEntry("topic", topic)
				.containsEntry("dlqTopic", Names.dlq(topic))
				.containsEntry("lockTopic", lockTopic)
				.containsEntry("maxAttempts", 2);
			Map<String, Object> stage = only(main.get("stages"));
			assertThat(stage).containsEntry("stage", 1).containsEntry("topic", Names.retry(topic, "10m"));
			Map<String, Object> locks = (Map<String, Object>) main.get("locks");
			assertThat(locks).containsEntry("active", 1).containsEntry("keys", 1).containsEntry("current", true);
			Map<String, Object> stuck = only(locks.get("oldest"));
			assertThat(stuck).containsEntry("key", "stuck")
				.containsEntry("stage", 1)
				.containsEntry("stageTopic", Names.retry(topic, "10m"))
				.containsEntry("retryCount", 1)
				.containsEntry("originOffset", 0)
				.containsEntry("moving", false);
			// the age is a duration, small and not negative: the lock was written moments
			// ago
			Duration age = Duration.parse(stuck.get("age").toString());
			assertThat(age.isNegative()).isFalse();
			assertThat(age).isLessThan(WAIT.multipliedBy(2));
			assertThat((Map<String, Object>) main.get("deadLetters")).containsEntry("records", 0)
				.containsEntry("written", 0);

			// the write operation is a dry run unless told otherwise, and a dry run is a
			// read
			WebEndpointResponse<Object> answer = endpoint.replay(Names.dlq(topic), null, null, null, null, null, null,
					null, null, null, null, null, SecurityContext.NONE);
			assertThat(answer.getStatus()).isEqualTo(200);
			ReplayReport dryRun = (ReplayReport) answer.getBody();
			assertThat(dryRun.request().dryRun()).isTrue();
			assertThat(dryRun.request().to()).isEqualTo(topic);
			assertThat(dryRun.published()).isZero();
		}
		finally {
			GatedLockReads.open(lockTopic);
		}
	}

	private static long settledLocks(KafkaResilienceEndpoint endpoint) {
		return endpoint.resilience()
			.listeners()
			.get(0)
			.topics()
			.get(0)
			.locks()
			.oldest()
			.stream()
			.filter((lock) -> !lock.moving())
			.count();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> only(Object list) {
		assertThat((List<Object>) list).hasSize(1);
		return ((List<Map<String, Object>>) list).get(0);
	}

}
