package io.github.kafkaresilience.internal.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Supplier;

import io.github.kafkaresilience.internal.dlq.DeadLetterBrowser;
import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.internal.outage.OutageBreaker;
import io.github.kafkaresilience.internal.actuate.TenantViews.RateLimitDescriptor;
import io.github.kafkaresilience.internal.actuate.TenantViews.TenantDescriptor;
import org.apache.kafka.clients.admin.Admin;
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
 * The {@code kafkaresilience} Actuator endpoint. Its operations:
 * <ul>
 * <li>{@code GET /actuator/kafkaresilience} ({@link #resilience()}): every ordered retry
 * listener with its state, tenants, rate limit and topics and, per main topic, its
 * stages, the live locks (how many, on how many keys, and the oldest ones with key, stage
 * and age) and how many dead letters its dead-letter topic holds.</li>
 * <li>{@code GET /actuator/kafkaresilience/{view}} ({@code view}): the held keys
 * ({@code held}), dead letters ({@code dead-letters}) or one dead letter
 * ({@code dead-letter}), page by page.</li>
 * <li>{@code POST /actuator/kafkaresilience/{action}} ({@code act}): an operator's action
 * ({@link OperatorActions}): {@code retry-now}, {@code dead-letter-now}, {@code pause},
 * {@code resume}.</li>
 * <li>{@code POST /actuator/kafkaresilience} ({@code replay}): a replay of dead letters
 * back into the ladder of their dead-letter topic (see {@link DlqReplayer}). A replay is
 * a dry run unless {@code dryRun} is {@code false}; a dry run is a read, a replay that
 * sends an action.</li>
 * </ul>
 *
 * @since 0.1.0
 */
@Endpoint(id = "kafkaresilience")
public class KafkaResilienceEndpoint {

	private final ListenerRegistry listeners;

	private final LockCoordinator locks;

	private final DeadLetterCounts deadLetters;

	private final int oldestLocks;

	private final Clock clock;

	private final OperatorActions actions;

	private final ViewSettings settings;

	private final ConsoleViews views;

	private final WebReplays replays;

	/**
	 * @param listeners the listeners
	 * @param locks the lock views of their topics
	 * @param admins creates an admin client for the dead-letter counts (closed after each
	 * read)
	 * @param replayer the replayer of the write operation
	 * @param oldestLocks how many of the oldest live locks to list per main topic
	 * @param clock the clock lock ages are measured with
	 */
	public KafkaResilienceEndpoint(ListenerRegistry listeners, LockCoordinator locks, Supplier<Admin> admins,
			Supplier<DlqReplayer> replayer, int oldestLocks, Clock clock) {
		this(listeners, locks, admins, replayer, oldestLocks, clock,
				new OperatorActions(listeners, locks, false, null, null, clock), null, null, ViewSettings.defaults());
	}

	/**
	 * @param listeners the listeners
	 * @param locks the lock views of their topics
	 * @param admins creates an admin client for the dead-letter counts (closed after each
	 * read)
	 * @param replayer the replayer of the write operation
	 * @param oldestLocks how many of the oldest live locks to list per main topic
	 * @param clock the clock lock ages are measured with
	 * @param actions what an operator may do
	 * @param browser reads dead-letter topics, {@code null} to offer no dead-letter views
	 * @param lastErrors reads the last failure of held keys' heads, {@code null} to show
	 * none
	 * @param settings how much one request reads and what of a dead letter it shows
	 */
	public KafkaResilienceEndpoint(ListenerRegistry listeners, LockCoordinator locks, Supplier<Admin> admins,
			Supplier<DlqReplayer> replayer, int oldestLocks, Clock clock, OperatorActions actions,
			@Nullable DeadLetterBrowser browser, @Nullable LastErrors lastErrors, ViewSettings settings) {
		if (oldestLocks < 0) {
			throw new IllegalArgumentException(
					"kafka.resilience.endpoint.oldest-locks must be 0 or more but was " + oldestLocks);
		}
		ScanPermits scans = new ScanPermits();
		this.listeners = listeners;
		this.locks = locks;
		this.deadLetters = new DeadLetterCounts(admins);
		this.oldestLocks = oldestLocks;
		this.clock = clock;
		this.actions = actions;
		this.settings = settings;
		this.views = new ConsoleViews(listeners, locks, browser, lastErrors, settings, scans, clock);
		this.replays = new WebReplays(listeners, replayer, actions, scans, settings.scanLimit(), clock);
	}

	@ReadOperation
	public ResilienceDescriptor resilience() {
		Map<String, LockRegistry> registries = new HashMap<>();
		this.locks.registries().forEach((registry) -> registries.put(registry.lockTopic(), registry));
		List<ListenerEndpoint> endpoints = this.listeners.endpoints();
		Map<String, DlqDescriptor> deadLetters = this.deadLetters
			.of(plans().stream().map(LadderPlan::dlqTopic).toList());
		Instant now = this.clock.instant();
		List<ListenerDescriptor> descriptors = new ArrayList<>();
		for (ListenerEndpoint endpoint : endpoints) {
			RetryContainer container = this.listeners.container(endpoint.id());
			List<TopicDescriptor> topics = new ArrayList<>();
			for (LadderPlan plan : this.listeners.plans(endpoint.id())) {
				topics.add(describe(plan, registries.get(plan.lockTopic()), deadLetters.get(plan.dlqTopic()), container,
						now));
			}
			RetryContainer running = (container != null && container.isRunning()) ? container : null;
			descriptors.add(new ListenerDescriptor(endpoint.id(), endpoint.groupId(), running != null,
					holding(container), batch(container), topics, running != null && running.isPauseRequested(),
					(running != null) ? running.assignment().size() : 0,
					(running != null) ? running.sinceLastPoll() : null,
					(running != null) ? running.closedBarriers().size() : 0,
					(container != null) ? container.pendingResults() : null, TenantViews.tenants(container),
					TenantViews.rateLimit(container)));
		}
		return new ResilienceDescriptor(descriptors, this.actions.isEnabled(), this.settings.maxPageSize());
	}

	/**
	 * One view of the ladders, {@code GET /actuator/kafkaresilience/{view}}:
	 * <ul>
	 * <li>{@code held}: the held keys of every ladder (or of {@code listener} and
	 * {@code topic}), oldest first, one page ({@code page} from 0, {@code size} rows) at
	 * a time, searched by {@code key} (contained, ignoring case);</li>
	 * <li>{@code dead-letters}: the newest dead letters of a ladder ({@code listener},
	 * {@code topic}) that match the replay filters, at most {@code size}, among the
	 * records read up to the scan limit;</li>
	 * <li>{@code dead-letter}: one dead letter of a ladder ({@code partition},
	 * {@code offset}) with its headers and value, as {@link ValueDisclosure} shows them
	 * to the caller.</li>
	 * </ul>
	 */
	@ReadOperation
	public WebEndpointResponse<Object> view(@Selector String view, @Nullable String listener, @Nullable String topic,
			@Nullable String key, @Nullable Integer page, @Nullable Integer size, @Nullable String since,
			@Nullable String until, @Nullable String reason, @Nullable String exception, @Nullable String errorClass,
			@Nullable Integer partition, @Nullable Long offset, SecurityContext security) {
		try {
			return switch (view) {
				case "held" -> ConsoleViews.ok(this.views.held(listener, topic, key, page, size));
				case "dead-letters" ->
					this.views.deadLetters(listener, topic, since, until, reason, exception, errorClass, key, size);
				case "dead-letter" -> this.views.deadLetter(listener, topic, partition, offset,
						this.settings.disclosure().showsValues(this.actions.isOperator(security)));
				default -> ConsoleViews.error(404, "No view '" + view + "'; known: held, dead-letters, dead-letter");
			};
		}
		catch (IllegalArgumentException ex) {
			return ConsoleViews.error(400, ex.getMessage());
		}
	}

	/**
	 * One view of the ladders, as the read operation above answers a caller without a
	 * principal or roles.
	 */
	public WebEndpointResponse<Object> view(String view, @Nullable String listener, @Nullable String topic,
			@Nullable String key, @Nullable Integer page, @Nullable Integer size, @Nullable String since,
			@Nullable String until, @Nullable String reason, @Nullable String exception, @Nullable String errorClass,
			@Nullable Integer partition, @Nullable Long offset) {
		return view(view, listener, topic, key, page, size, since, until, reason, exception, errorClass, partition,
				offset, SecurityContext.NONE);
	}

	/**
	 * An operator's action, {@code POST /actuator/kafkaresilience/{action}}:
	 * {@code retry-now} or {@code dead-letter-now} on the head of a held key
	 * ({@code listener}, {@code topic}, {@code lock}: the lock id the held keys list), or
	 * {@code pause} or {@code resume} of a {@code listener}. Refused (403) unless actions
	 * are enabled, and, with Spring Security, unless the caller has the configured role.
	 */
	@WriteOperation
	public WebEndpointResponse<Object> act(@Selector String action, @Nullable String listener, @Nullable String topic,
			@Nullable String lock, SecurityContext security) {
		try {
			return switch (action) {
				case "retry-now",
						"dead-letter-now" ->
					ConsoleViews.ok(this.actions.command(security, OperatorCommand.Action.of(action),
							ConsoleViews.required(listener, "listener"), ConsoleViews.required(topic, "topic"),
							ConsoleViews.required(lock, "lock")));
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
	 * Replays dead letters of one of this application's dead-letter topics back into the
	 * ladder of the group that owns it (see {@link DlqReplayer}),
	 * {@code POST /actuator/kafkaresilience}. A dry run is a read: it reads at most the
	 * scan limit, one read of a ladder at a time (429 while another runs). A replay that
	 * sends is an action: refused (403) unless actions are enabled and, with Spring
	 * Security, the caller has the configured role; audited.
	 * @param from the dead-letter topic
	 * @param to the main topic: if given, the one of {@code from}'s ladder
	 * @param group the consumer group: if given, the one of {@code from}'s ladder
	 * @param dryRun {@code false} to send; by default the replay only counts
	 */
	@WriteOperation
	public WebEndpointResponse<Object> replay(String from, @Nullable String to, @Nullable String group,
			@Nullable String since, @Nullable String until, @Nullable String errorClass, @Nullable String exception,
			@Nullable String reason, @Nullable String key, @Nullable String originalPartition,
			@Nullable String originalOffset, @Nullable Boolean dryRun, SecurityContext security) {
		try {
			return this.replays.replay(security, from, to, group, since, until, errorClass, exception, reason, key,
					originalPartition, originalOffset, dryRun);
		}
		catch (OperatorActions.Refused ex) {
			return ConsoleViews.error(ex.status(), ex.getMessage());
		}
		catch (IllegalArgumentException ex) {
			return ConsoleViews.error(400, ex.getMessage());
		}
	}

	/** The ladders of every listener here. */
	private List<LadderPlan> plans() {
		return this.listeners.endpoints()
			.stream()
			.flatMap((endpoint) -> this.listeners.plans(endpoint.id()).stream())
			.toList();
	}

	private TopicDescriptor describe(LadderPlan plan, @Nullable LockRegistry registry, @Nullable DlqDescriptor dlq,
			@Nullable RetryContainer container, Instant now) {
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
		return new TopicDescriptor(plan.mainTopic(), stages, plan.maxAttempts(), plan.dlqTopic(), plan.lockTopic(),
				locks, dlq);
	}

	private static LockDescriptor describe(LadderPlan plan, Lock lock, Instant now) {
		String stageTopic = (lock.stage() <= plan.stages().size()) ? plan.stages().get(lock.stage() - 1).topic()
				: plan.dlqTopic();
		return new LockDescriptor(ConsoleViews.keyText(lock.key()), lock.stage(), stageTopic,
				Duration.between(lock.updated(), now), lock.updated(), lock.retryCount(), lock.originPartition(),
				lock.originOffset(), lock.isMoving(), lock.id());
	}

	/**
	 * The consumer lag of this instance's partitions of a topic; {@code null} when it has
	 * none.
	 */
	private static @Nullable Long lag(@Nullable RetryContainer container, String topic) {
		if (container == null || !container.isRunning()) {
			return null;
		}
		Long total = null;
		for (TopicPartition partition : container.assignment()) {
			if (partition.topic().equals(topic)) {
				OptionalLong lag = container.lag(partition);
				if (lag.isPresent()) {
					total = ((total != null) ? total : 0) + lag.getAsLong();
				}
			}
		}
		return total;
	}

	/**
	 * What the read operation returns.
	 *
	 * @param listeners every ordered retry listener
	 * @param actionsEnabled whether an operator may act through the endpoint
	 * @param maxPageSize the most rows a page of held keys or dead letters may ask for
	 */
	public record ResilienceDescriptor(List<ListenerDescriptor> listeners, boolean actionsEnabled, int maxPageSize) {
	}

	/**
	 * One {@code @OrderedRetryListener}.
	 *
	 * @param id its id
	 * @param group its consumer group
	 * @param running whether its consumer runs
	 * @param holding when it holds its records for an outage: since when and why;
	 * otherwise {@code null}
	 * @param batch how a batch listener gathers its batches; {@code null} for a record
	 * listener
	 * @param topics its main topics
	 * @param paused whether it is paused (on request: the endpoint's {@code pause}, or
	 * the registry's)
	 * @param partitions the partitions this instance holds, of the main and stage topics
	 * @param sinceLastPoll how long ago its consumer last polled, {@code null} when it is
	 * not running
	 * @param closedBarriers partitions held paused by the sync barrier now
	 * @param pendingResults records whose handler returned a result that has not
	 * completed yet; {@code null} for a listener whose method returns once done
	 * @param tenants the tenants of its records and what each has, {@code null} when its
	 * records have no tenants
	 * @param rateLimit its rate limit, {@code null} when it has none
	 */
	public record ListenerDescriptor(String id, String group, boolean running, @Nullable HoldingDescriptor holding,
			@Nullable BatchDescriptor batch, List<TopicDescriptor> topics, boolean paused, int partitions,
			@Nullable Duration sinceLastPoll, int closedBarriers, @Nullable Integer pendingResults,
			@Nullable List<TenantDescriptor> tenants, @Nullable RateLimitDescriptor rateLimit) {
	}

	/**
	 * How a batch listener gathers its batches.
	 *
	 * @param size the most records in one batch
	 * @param maxWait how long a batch that is not full waits for more records
	 * @param failure what a batch that fails without naming a record means:
	 * {@code bisect} or {@code fail-all}
	 */
	public record BatchDescriptor(int size, Duration maxWait, String failure) {
	}

	private static @Nullable BatchDescriptor batch(@Nullable RetryContainer container) {
		BatchSettings settings = (container != null) ? container.batchSettings() : null;
		return (settings != null)
				? new BatchDescriptor(settings.size(), settings.maxWait(), settings.failure().toString()) : null;
	}

	/**
	 * A listener that holds its records because its dependency looks down for every key.
	 *
	 * @param since when its outage breaker opened
	 * @param reason why
	 * @param heldRecords the records it holds in memory
	 */
	public record HoldingDescriptor(@Nullable Instant since, @Nullable String reason, int heldRecords) {
	}

	private static @Nullable HoldingDescriptor holding(@Nullable RetryContainer container) {
		if (container == null) {
			return null;
		}
		OutageBreaker breaker = container.outageBreaker();
		if (breaker == null || !breaker.isOpen()) {
			return null;
		}
		return new HoldingDescriptor(breaker.openedAt(), breaker.reason(), container.heldRecords());
	}

	/**
	 * One main topic and its ladder.
	 *
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
	 *
	 * @param stage its number, from 1
	 * @param topic its topic
	 * @param delay how long a record waits in it
	 * @param waiting live locks at this stage: records that wait in it, or move to it
	 * @param lag the consumer lag of this instance's partitions of its topic,
	 * {@code null} when it holds none
	 */
	public record StageDescriptor(int stage, String topic, Duration delay, int waiting, @Nullable Long lag) {
	}

	/**
	 * The live locks of a main topic.
	 *
	 * @param active live locks
	 * @param keys keys with at least one live lock
	 * @param current whether the lock view is loaded (the tailer caught up once)
	 * @param oldest the locks written longest ago, oldest first
	 */
	public record LocksDescriptor(int active, int keys, boolean current, List<LockDescriptor> oldest) {
	}

	/**
	 * One live lock: a key whose records wait in the ladder.
	 *
	 * @param key the record key (text, or {@code base64:...})
	 * @param stage the stage its record waits in (or is moving to)
	 * @param stageTopic that stage's topic
	 * @param age how long ago the lock was last written: how long the record has been at
	 * its stage
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
	 *
	 * @param records dead letters its topic holds now (written less those past retention)
	 * @param written dead letters ever written (the sum of its end offsets)
	 * @param error why the counts are missing, if they are
	 */
	public record DlqDescriptor(@Nullable Long records, @Nullable Long written, @Nullable String error) {
	}

}
