package io.github.kafkaresilience.actuate;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.kafkaresilience.dlq.DeadLetterBrowser;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.dlq.ReplayArguments;
import io.github.kafkaresilience.dlq.ReplayReport;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.ladder.LadderPlan;
import io.github.kafkaresilience.listener.ListenerEndpoint;
import io.github.kafkaresilience.container.OrderedRetryContainer;
import io.github.kafkaresilience.listener.OrderedRetryListenerRegistry;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockCoordinator;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.lock.OperatorCommand;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.outage.OutageBreaker;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code kafkaresilience} Actuator endpoint.
 * <ul>
 * <li>Read: every ordered retry listener with its topics and, per main topic, its stages, the
 * live locks (how many, on how many keys, and the oldest ones with key, stage and age) and how
 * many dead letters its dead-letter topic holds.</li>
 * <li>Write: a replay of dead letters (see {@link DlqReplayer}). It only reads the dead-letter
 * topic of a listener of this application and sends to a main topic of one, and it is a dry
 * run unless {@code dryRun} is {@code false}.</li>
 * </ul>
 *
 * @since 0.1.0
 */
@Endpoint(id = "kafkaresilience")
public class KafkaResilienceEndpoint {

	private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(10);

	private final OrderedRetryListenerRegistry listeners;

	private final LockCoordinator locks;

	private final Supplier<Admin> admins;

	private final Supplier<DlqReplayer> replayer;

	private final int oldestLocks;

	private final Clock clock;

	private final OperatorActions actions;

	private final ConsoleViews views;

	/**
	 * @param listeners the listeners
	 * @param locks the lock views of their topics
	 * @param admins creates an admin client for the dead-letter counts (closed after each read)
	 * @param replayer the replayer of the write operation
	 * @param oldestLocks how many of the oldest live locks to list per main topic
	 * @param clock the clock lock ages are measured with
	 */
	public KafkaResilienceEndpoint(OrderedRetryListenerRegistry listeners, LockCoordinator locks, Supplier<Admin> admins,
			Supplier<DlqReplayer> replayer, int oldestLocks, Clock clock) {
		this(listeners, locks, admins, replayer, oldestLocks, clock,
				new OperatorActions(listeners, locks, false, null, null, clock), null, null, 200);
	}

	/**
	 * @param listeners the listeners
	 * @param locks the lock views of their topics
	 * @param admins creates an admin client for the dead-letter counts (closed after each read)
	 * @param replayer the replayer of the write operation
	 * @param oldestLocks how many of the oldest live locks to list per main topic
	 * @param clock the clock lock ages are measured with
	 * @param actions what an operator may do
	 * @param browser reads dead-letter topics, {@code null} to offer no dead-letter views
	 * @param lastErrors reads the last failure of held keys' heads, {@code null} to show none
	 * @param maxPageSize the most rows one page of held keys or dead letters holds
	 */
	public KafkaResilienceEndpoint(OrderedRetryListenerRegistry listeners, LockCoordinator locks, Supplier<Admin> admins,
			Supplier<DlqReplayer> replayer, int oldestLocks, Clock clock, OperatorActions actions,
			@Nullable DeadLetterBrowser browser, @Nullable LastErrors lastErrors, int maxPageSize) {
		this.actions = actions;
		this.views = new ConsoleViews(listeners, locks, browser, lastErrors, maxPageSize, clock);
		if (oldestLocks < 0) {
			throw new IllegalArgumentException("kafka.resilience.endpoint.oldest-locks must be 0 or more but was " + oldestLocks);
		}
		this.listeners = listeners;
		this.locks = locks;
		this.admins = admins;
		this.replayer = replayer;
		this.oldestLocks = oldestLocks;
		this.clock = clock;
	}

	@ReadOperation
	public ResilienceDescriptor resilience() {
		Map<String, LockRegistry> registries = new HashMap<>();
		this.locks.registries().forEach((registry) -> registries.put(registry.lockTopic(), registry));
		List<ListenerEndpoint> endpoints = this.listeners.endpoints();
		Map<String, DlqDescriptor> deadLetters = deadLetters(plans().stream().map(LadderPlan::dlqTopic).toList());
		Instant now = this.clock.instant();
		List<ListenerDescriptor> descriptors = new ArrayList<>();
		for (ListenerEndpoint endpoint : endpoints) {
			OrderedRetryContainer container = this.listeners.container(endpoint.id());
			List<TopicDescriptor> topics = new ArrayList<>();
			for (LadderPlan plan : this.listeners.plans(endpoint.id())) {
				topics.add(describe(plan, registries.get(plan.lockTopic()), deadLetters.get(plan.dlqTopic()), container,
						now));
			}
			boolean running = container != null && container.isRunning();
			descriptors.add(new ListenerDescriptor(endpoint.id(), endpoint.groupId(), running, holding(container),
					batch(container), topics, running && container.isPauseRequested(),
					running ? container.assignment().size() : 0, running ? container.sinceLastPoll() : null,
					running ? container.closedBarriers().size() : 0));
		}
		return new ResilienceDescriptor(descriptors, this.actions.isEnabled());
	}

	/**
	 * One view of the ladders, {@code GET /actuator/kafkaresilience/{view}}:
	 * <ul>
	 * <li>{@code held}: the held keys of every ladder (or of {@code listener} and
	 * {@code topic}), oldest first, one page ({@code page} from 0, {@code size} rows) at a time,
	 * searched by {@code key} (contained, ignoring case);</li>
	 * <li>{@code dead-letters}: the newest dead letters of a ladder ({@code listener},
	 * {@code topic}) that match the replay filters, at most {@code size};</li>
	 * <li>{@code dead-letter}: one dead letter of a ladder ({@code partition}, {@code offset})
	 * with its headers and value.</li>
	 * </ul>
	 */
	@ReadOperation
	public WebEndpointResponse<Object> view(@Selector String view, @Nullable String listener, @Nullable String topic,
			@Nullable String key, @Nullable Integer page, @Nullable Integer size, @Nullable String since,
			@Nullable String until, @Nullable String reason, @Nullable String exception, @Nullable String errorClass,
			@Nullable Integer partition, @Nullable Long offset) {
		try {
			return switch (view) {
				case "held" -> ConsoleViews.ok(this.views.held(listener, topic, key, page, size));
				case "dead-letters" -> ConsoleViews.ok(this.views.deadLetters(listener, topic, since, until, reason,
						exception, errorClass, key, size));
				case "dead-letter" -> this.views.deadLetter(listener, topic, partition, offset);
				default -> ConsoleViews.error(404, "No view '" + view + "'; known: held, dead-letters, dead-letter");
			};
		}
		catch (IllegalArgumentException ex) {
			return ConsoleViews.error(400, ex.getMessage());
		}
	}

	/**
	 * An operator's action, {@code POST /actuator/kafkaresilience/{action}}: {@code retry-now}
	 * or {@code dead-letter-now} on the head of a held key ({@code listener}, {@code topic},
	 * {@code lock}: the lock id the held keys list), or {@code pause} or {@code resume} of a
	 * {@code listener}. Refused (403) unless actions are enabled, and, with Spring Security,
	 * unless the caller has the configured role.
	 */
	@WriteOperation
	public WebEndpointResponse<Object> act(@Selector String action, @Nullable String listener, @Nullable String topic,
			@Nullable String lock, SecurityContext security) {
		try {
			return switch (action) {
				case "retry-now", "dead-letter-now" -> ConsoleViews.ok(this.actions.command(security,
						OperatorCommand.Action.of(action), ConsoleViews.required(listener, "listener"),
						ConsoleViews.required(topic, "topic"), ConsoleViews.required(lock, "lock")));
				case "pause", "resume" -> ConsoleViews.ok(this.actions.pause(security,
						ConsoleViews.required(listener, "listener"), "pause".equals(action)));
				default -> ConsoleViews.error(404,
						"No action '" + action + "'; known: retry-now, dead-letter-now, pause, resume");
			};
		}
		catch (OperatorActions.Refused ex) {
			return ConsoleViews.error(ex.status(), ex.getMessage());
		}
		catch (IllegalArgumentException ex) {
			return ConsoleViews.error(400, ex.getMessage());
		}
	}


	/**
	 * Replays dead letters of one of this application's dead-letter topics back into the ladder
	 * of the group that owns it (see {@link DlqReplayer}).
	 * @param from the dead-letter topic
	 * @param to the main topic; by default the one of {@code from}'s ladder
	 * @param group the consumer group; by default the one of {@code from}'s ladder
	 * @param dryRun {@code false} to send; by default the replay only counts
	 */
	@WriteOperation
	public ReplayReport replay(String from, @Nullable String to, @Nullable String group, @Nullable String since,
			@Nullable String until, @Nullable String errorClass, @Nullable String exception, @Nullable String reason,
			@Nullable String key, @Nullable String originalPartition, @Nullable String originalOffset,
			@Nullable Boolean dryRun) {
		List<LadderPlan> plans = plans();
		LadderPlan source = plans.stream()
			.filter((plan) -> plan.dlqTopic().equals(from))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("'" + from + "' is not the dead-letter topic of a listener here; "
					+ "known: " + plans.stream().map(LadderPlan::dlqTopic).toList()));
		String target = (to != null && !to.isBlank()) ? to : source.mainTopic();
		String owner = (group != null && !group.isBlank()) ? group : source.group();
		if (plans.stream().noneMatch((plan) -> plan.mainTopic().equals(target) && plan.group().equals(owner))) {
			throw new IllegalArgumentException("No listener here consumes '" + target + "' in group '" + owner
					+ "'; known: " + plans.stream().map(LadderPlan::describe).toList());
		}
		ReplayRequest request = ReplayArguments.request(from, target, owner, since, until, errorClass, exception, reason,
				key, originalPartition, originalOffset, !Boolean.FALSE.equals(dryRun), this.clock);
		return this.replayer.get().replay(request);
	}

	/** The ladders of every listener here. */
	private List<LadderPlan> plans() {
		return this.listeners.endpoints()
			.stream()
			.flatMap((endpoint) -> this.listeners.plans(endpoint.id()).stream())
			.toList();
	}

	private TopicDescriptor describe(LadderPlan plan, @Nullable LockRegistry registry, @Nullable DlqDescriptor dlq,
			@Nullable OrderedRetryContainer container, Instant now) {
		int[] waiting = new int[plan.lastStage() + 1];
		if (registry != null) {
			for (Lock lock : registry.snapshot()) {
				if (lock.stage() <= plan.lastStage()) {
					waiting[lock.stage()]++;
				}
			}
		}
		List<StageDescriptor> stages = plan.stages()
			.stream()
			.map((stage) -> new StageDescriptor(stage.index(), stage.topic(), stage.delay(), waiting[stage.index()],
					lag(container, stage.topic())))
			.toList();
		LocksDescriptor locks = null;
		if (registry != null) {
			List<LockDescriptor> oldest = registry.oldest(this.oldestLocks)
				.stream()
				.map((lock) -> describe(plan, lock, now))
				.toList();
			locks = new LocksDescriptor(registry.size(), registry.lockedKeys(), registry.hasCaughtUp(), oldest);
		}
		return new TopicDescriptor(plan.mainTopic(), stages, plan.maxAttempts(), plan.dlqTopic(), plan.lockTopic(), locks,
				dlq);
	}

	private static LockDescriptor describe(LadderPlan plan, Lock lock, Instant now) {
		String stageTopic = (lock.stage() <= plan.stages().size()) ? plan.stages().get(lock.stage() - 1).topic()
				: plan.dlqTopic();
		return new LockDescriptor(keyText(lock.key()), lock.stage(), stageTopic, Duration.between(lock.updated(), now),
				lock.updated(), lock.retryCount(), lock.originPartition(), lock.originOffset(), lock.isMoving(), lock.id());
	}

	/** The consumer lag of this instance's partitions of a topic; {@code null} when it has none. */
	private static @Nullable Long lag(@Nullable OrderedRetryContainer container, String topic) {
		if (container == null || !container.isRunning()) {
			return null;
		}
		Long total = null;
		for (TopicPartition partition : container.assignment()) {
			if (partition.topic().equals(topic)) {
				java.util.OptionalLong lag = container.lag(partition);
				if (lag.isPresent()) {
					total = ((total != null) ? total : 0) + lag.getAsLong();
				}
			}
		}
		return total;
	}

	/** Dead letters held per topic, from the earliest and latest offsets of its partitions. */
	private Map<String, DlqDescriptor> deadLetters(List<String> topics) {
		Map<String, DlqDescriptor> result = new HashMap<>();
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
						held += entry.getValue().offset() - first.get(entry.getKey()).offset();
						written += entry.getValue().offset();
					}
				}
				result.put(topic, new DlqDescriptor(held, written, null));
			}
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			topics.forEach((topic) -> result.put(topic, new DlqDescriptor(null, null, "unavailable: " + ex)));
		}
		return result;
	}

	/**
	 * A key as text when it is printable UTF-8, otherwise {@code base64:} and its bytes in
	 * Base64.
	 */
	static String keyText(Bytes key) {
		byte[] bytes = key.get();
		try {
			String text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
			if (text.chars().noneMatch(Character::isISOControl)) {
				return text;
			}
		}
		catch (CharacterCodingException ex) {
			// not text
		}
		return "base64:" + Base64.getEncoder().encodeToString(bytes);
	}

	/**
	 * What the read operation returns.
	 * @param listeners every ordered retry listener
	 * @param actionsEnabled whether an operator may act through the endpoint
	 */
	public record ResilienceDescriptor(List<ListenerDescriptor> listeners, boolean actionsEnabled) {
	}

	/**
	 * One {@code @OrderedRetryListener}.
	 * @param id its id
	 * @param group its consumer group
	 * @param running whether its consumer runs
	 * @param holding when it holds its records for an outage: since when and why; otherwise
	 * {@code null}
	 * @param batch how a batch listener gathers its batches; {@code null} for a record listener
	 * @param topics its main topics
	 * @param paused whether it is paused (on request: the endpoint's {@code pause}, or the registry's)
	 * @param partitions the partitions this instance holds, of the main and stage topics
	 * @param sinceLastPoll how long ago its consumer last polled, {@code null} when it is not running
	 * @param closedBarriers partitions held paused by the sync barrier now
	 */
	public record ListenerDescriptor(String id, String group, boolean running, @Nullable HoldingDescriptor holding,
			@Nullable BatchDescriptor batch, List<TopicDescriptor> topics, boolean paused, int partitions,
			@Nullable Duration sinceLastPoll, int closedBarriers) {
	}

	/**
	 * How a batch listener gathers its batches.
	 * @param size the most records in one batch
	 * @param maxWait how long a batch that is not full waits for more records
	 * @param failure what a batch that fails without naming a record means: {@code bisect} or
	 * {@code fail-all}
	 */
	public record BatchDescriptor(int size, Duration maxWait, String failure) {
	}

	private static @Nullable BatchDescriptor batch(@Nullable OrderedRetryContainer container) {
		BatchSettings settings = (container != null) ? container.batchSettings() : null;
		return (settings != null)
				? new BatchDescriptor(settings.size(), settings.maxWait(), settings.failure().toString()) : null;
	}

	/**
	 * A listener that holds its records because its dependency looks down for every key.
	 * @param since when its outage breaker opened
	 * @param reason why
	 * @param heldRecords the records it holds in memory
	 */
	public record HoldingDescriptor(@Nullable Instant since, @Nullable String reason, int heldRecords) {
	}

	private static @Nullable HoldingDescriptor holding(@Nullable OrderedRetryContainer container) {
		OutageBreaker breaker = (container != null) ? container.outageBreaker() : null;
		if (breaker == null || !breaker.isOpen()) {
			return null;
		}
		return new HoldingDescriptor(breaker.openedAt(), breaker.reason(), container.heldRecords());
	}

	/**
	 * One main topic and its ladder.
	 * @param topic the main topic
	 * @param stages its retry stages, stage 1 first
	 * @param maxAttempts attempts before a record is dead-lettered
	 * @param dlqTopic its dead-letter topic
	 * @param lockTopic its lock topic
	 * @param locks its live locks, {@code null} before the listener started
	 * @param deadLetters its dead letters
	 */
	public record TopicDescriptor(String topic, List<StageDescriptor> stages, int maxAttempts, String dlqTopic,
			String lockTopic, @Nullable LocksDescriptor locks, @Nullable DlqDescriptor deadLetters) {
	}

	/**
	 * One retry stage.
	 * @param stage its number, from 1
	 * @param topic its topic
	 * @param delay how long a record waits in it
	 * @param waiting live locks at this stage: records that wait in it, or move to it
	 * @param lag the consumer lag of this instance's partitions of its topic, {@code null} when
	 * it holds none
	 */
	public record StageDescriptor(int stage, String topic, Duration delay, int waiting, @Nullable Long lag) {
	}

	/**
	 * The live locks of a main topic.
	 * @param active live locks
	 * @param keys keys with at least one live lock
	 * @param current whether the lock view is loaded (the tailer caught up once)
	 * @param oldest the locks written longest ago, oldest first
	 */
	public record LocksDescriptor(int active, int keys, boolean current, List<LockDescriptor> oldest) {
	}

	/**
	 * One live lock: a key whose records wait in the ladder.
	 * @param key the record key (text, or {@code base64:...})
	 * @param stage the stage its record waits in (or is moving to)
	 * @param stageTopic that stage's topic
	 * @param age how long ago the lock was last written: how long the record has been at its stage
	 * @param since when the lock was last written
	 * @param retryCount failed attempts so far
	 * @param originPartition the partition of the main topic the record was born in
	 * @param originOffset its offset there
	 * @param moving whether a move to {@code stage} is in flight
	 * @param id the lock id
	 */
	public record LockDescriptor(String key, int stage, String stageTopic, Duration age, Instant since, int retryCount,
			int originPartition, long originOffset, boolean moving, String id) {
	}

	/**
	 * The dead letters of a main topic.
	 * @param records dead letters its topic holds now (written less those past retention)
	 * @param written dead letters ever written (the sum of its end offsets)
	 * @param error why the counts are missing, if they are
	 */
	public record DlqDescriptor(@Nullable Long records, @Nullable Long written, @Nullable String error) {
	}

}
