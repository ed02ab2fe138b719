package io.github.kafkaresilience.autoconfigure;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.StringUtils;
import org.springframework.validation.annotation.Validated;

/**
 * Configuration of ordered non-blocking retries. Connection settings come from
 * {@code spring.kafka.*}. The constraints are checked when the properties are bound, when
 * a Bean Validation provider is present (the starter brings one): a bad value fails
 * startup naming the property, its value and the reason.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("kafka.resilience")
@Validated
public class ResilienceProperties {

	/**
	 * What a topic name template is made of: Kafka's topic name characters and
	 * placeholders.
	 */
	private static final String NAME_PART = "[a-zA-Z0-9._-]|\\{group}|\\{topic}";

	/**
	 * How the message of a bad template starts; its placeholders are escaped, or Bean
	 * Validation reads them.
	 */
	private static final String NAME_PARTS = "must be made of letters, digits, '.', '_', '-' and the placeholders ";

	/**
	 * Whether ordered retry listeners are enabled.
	 */
	private boolean enabled = true;

	/**
	 * Stable id of this application instance, written with every lock record. Must
	 * survive restarts (for example the pod or host name); defaults to the HOSTNAME
	 * environment variable, then the local host name.
	 */
	private @Nullable String instanceId;

	/**
	 * How a retry move keeps the lock write and the publish consistent: 'compensate'
	 * (lock first, publish second, undo the lock if the publish fails) or 'transaction'
	 * (lock writes, publish and offset commit in one Kafka transaction; consumers and the
	 * lock tailer read committed).
	 */
	@NotNull
	private DualWrite dualWrite = DualWrite.COMPENSATE;

	@Valid
	private final Retry retry = new Retry();

	@Valid
	private final Topics topics = new Topics();

	@Valid
	private final Consumer consumer = new Consumer();

	@Valid
	private final Locks locks = new Locks();

	@Valid
	private final Reaper reaper = new Reaper();

	private final DlqHandler dlqHandler = new DlqHandler();

	@Valid
	private final Replay replay = new Replay();

	@Valid
	private final Health health = new Health();

	@Valid
	private final Endpoint endpoint = new Endpoint();

	@Valid
	private final Idempotency idempotency = new Idempotency();

	@Valid
	@NestedConfigurationProperty
	private final OutageProperties outage = new OutageProperties();

	@Valid
	@NestedConfigurationProperty
	private final ConsoleProperties console = new ConsoleProperties();

	@NestedConfigurationProperty
	private final TenantsProperties tenants = new TenantsProperties();

	@NestedConfigurationProperty
	private final RateLimitProperties rateLimit = new RateLimitProperties();

	/**
	 * The one-off command the application runs instead of its listeners: set to 'replay'
	 * when it is started as 'java -jar app.jar replay ...'. Beans of the application that
	 * must not run then (load generators, schedulers) can be conditional on it.
	 */
	@Pattern(regexp = "\\s*|" + ReplayCommandEnvironmentPostProcessor.REPLAY,
			message = "is not a command: the only one is '" + ReplayCommandEnvironmentPostProcessor.REPLAY
					+ "'; remove the property to run the listeners")
	private @Nullable String command;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable String getInstanceId() {
		return this.instanceId;
	}

	public void setInstanceId(@Nullable String instanceId) {
		this.instanceId = instanceId;
	}

	/**
	 * The id of this instance: {@link #getInstanceId() the one set}, else the
	 * {@code HOSTNAME} environment variable, else the local host name.
	 * @throws IllegalStateException when none is set and the host name cannot be read
	 */
	public String determineInstanceId() {
		if (StringUtils.hasText(this.instanceId)) {
			return this.instanceId;
		}
		String hostname = System.getenv("HOSTNAME");
		if (StringUtils.hasText(hostname)) {
			return hostname;
		}
		try {
			return InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException("Could not derive an instance id from the host name; set "
					+ "kafka.resilience.instance-id to a value that stays the same across restarts", ex);
		}
	}

	public DualWrite getDualWrite() {
		return this.dualWrite;
	}

	public void setDualWrite(DualWrite dualWrite) {
		this.dualWrite = dualWrite;
	}

	public Retry getRetry() {
		return this.retry;
	}

	public Topics getTopics() {
		return this.topics;
	}

	public Consumer getConsumer() {
		return this.consumer;
	}

	public Locks getLocks() {
		return this.locks;
	}

	public Reaper getReaper() {
		return this.reaper;
	}

	public DlqHandler getDlqHandler() {
		return this.dlqHandler;
	}

	public Replay getReplay() {
		return this.replay;
	}

	public Health getHealth() {
		return this.health;
	}

	public Endpoint getEndpoint() {
		return this.endpoint;
	}

	public Idempotency getIdempotency() {
		return this.idempotency;
	}

	public ConsoleProperties getConsole() {
		return this.console;
	}

	public OutageProperties getOutage() {
		return this.outage;
	}

	public TenantsProperties getTenants() {
		return this.tenants;
	}

	public RateLimitProperties getRateLimit() {
		return this.rateLimit;
	}

	public @Nullable String getCommand() {
		return this.command;
	}

	public void setCommand(@Nullable String command) {
		this.command = command;
	}

	@RetentionLongerThanLease
	public static class Idempotency {

		/**
		 * Whether listeners are idempotent unless their @OrderedRetryListener says
		 * otherwise: each record's idempotency key is claimed before the handler runs and
		 * a record whose key was completed is skipped.
		 */
		private boolean enabled = false;

		/**
		 * How long a claim holds without being completed or released. A claim left by a
		 * crashed instance blocks its record's retries until then; keep it above the
		 * longest handler run, or a slow run's claim can be taken over.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration lease = Duration.ofMinutes(5);

		/**
		 * How long completed keys are remembered. A record replayed or redelivered after
		 * that runs again.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration retention = Duration.ofDays(7);

		/**
		 * How often keys older than the retention are deleted from the store.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration cleanupInterval = Duration.ofHours(1);

		/**
		 * Whether the handler and the completion of its key run in one transaction of the
		 * application's transaction manager (when it has exactly one), so that the
		 * handler's database writes and the key commit together.
		 */
		private boolean transaction = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getLease() {
			return this.lease;
		}

		public void setLease(Duration lease) {
			this.lease = lease;
		}

		public Duration getRetention() {
			return this.retention;
		}

		public void setRetention(Duration retention) {
			this.retention = retention;
		}

		public Duration getCleanupInterval() {
			return this.cleanupInterval;
		}

		public void setCleanupInterval(Duration cleanupInterval) {
			this.cleanupInterval = cleanupInterval;
		}

		public boolean isTransaction() {
			return this.transaction;
		}

		public void setTransaction(boolean transaction) {
			this.transaction = transaction;
		}

	}

	public static class Replay {

		/**
		 * Most dead letters a replay sends per second (command line and endpoint alike).
		 */
		@Positive
		private double rate = 100;

		public double getRate() {
			return this.rate;
		}

		public void setRate(double rate) {
			this.rate = rate;
		}

	}

	public static class Health {

		/**
		 * How long a freshly assigned partition may wait for the lock view before the
		 * health details report it.
		 */
		@NotNull
		@MinDuration("0ms")
		private Duration barrierWaitWarning = Duration.ofSeconds(30);

		/**
		 * Share of max.poll.interval.ms a gap between two polls may reach before the
		 * health details report it; past max.poll.interval.ms the consumer leaves its
		 * group.
		 */
		@DecimalMin(value = "0", inclusive = false, message = "must be a share of max.poll.interval.ms above 0")
		@DecimalMax(value = "1", message = "must be a share of max.poll.interval.ms, at most 1")
		private double pollGapWarning = 0.8;

		public Duration getBarrierWaitWarning() {
			return this.barrierWaitWarning;
		}

		public void setBarrierWaitWarning(Duration barrierWaitWarning) {
			this.barrierWaitWarning = barrierWaitWarning;
		}

		public double getPollGapWarning() {
			return this.pollGapWarning;
		}

		public void setPollGapWarning(double pollGapWarning) {
			this.pollGapWarning = pollGapWarning;
		}

	}

	public static class Endpoint {

		/**
		 * How many of the oldest live locks the kafkaresilience endpoint lists per topic.
		 */
		@Min(0)
		private int oldestLocks = 10;

		public int getOldestLocks() {
			return this.oldestLocks;
		}

		public void setOldestLocks(int oldestLocks) {
			this.oldestLocks = oldestLocks;
		}

	}

	public static class DlqHandler {

		/**
		 * Whether every dead letter is read back and passed to the DlqHandler bean (by
		 * default one JSON incident line per dead letter, on the logger
		 * kafka.resilience.dlq.incidents).
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	public static class Reaper {

		/**
		 * Whether zombie locks (live locks whose record can no longer be consumed) are
		 * released.
		 */
		private boolean enabled = true;

		/**
		 * How often each listener looks for zombie locks.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration interval = Duration.ofMinutes(1);

		/**
		 * How long a lock must be unchanged before it may be reaped.
		 */
		@NotNull
		@MinDuration("0ms")
		private Duration grace = Duration.ofMinutes(5);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public Duration getGrace() {
			return this.grace;
		}

		public void setGrace(Duration grace) {
			this.grace = grace;
		}

	}

	public static class Retry {

		/**
		 * Delays of the retry stages, one retry topic per delay, in order.
		 */
		@NotNull
		private List<@NotNull @MinDuration("1ms") Duration> delays = new ArrayList<>(
				List.of(Duration.ofSeconds(30), Duration.ofMinutes(5), Duration.ofHours(1)));

		/**
		 * Attempts a record gets, the first one included, before it goes to the
		 * dead-letter topic. Defaults to one more than the number of delays; beyond that
		 * the last stage is repeated.
		 */
		@Min(1)
		private @Nullable Integer maxAttempts;

		/**
		 * Exception types that are never retried: a record whose handler throws one of
		 * them (or one caused by one of them) goes to the dead-letter topic at once.
		 */
		@NotNull
		private List<Class<? extends Throwable>> permanentExceptions = new ArrayList<>();

		/**
		 * Share of each stage's delay by which retries' due times are spread (0 to 1): a
		 * retry comes due between its delay and its delay times (1 + jitter) after it
		 * entered the stage, so that keys that failed together do not come due together.
		 * 0 for none.
		 */
		@DecimalMin(value = "0", message = "must be a share of each stage's delay, at least 0")
		@DecimalMax(value = "1", message = "must be a share of each stage's delay, at most 1")
		private double jitter;

		public double getJitter() {
			return this.jitter;
		}

		public void setJitter(double jitter) {
			this.jitter = jitter;
		}

		public List<Duration> getDelays() {
			return this.delays;
		}

		public void setDelays(List<Duration> delays) {
			this.delays = delays;
		}

		public @Nullable Integer getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(@Nullable Integer maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public List<Class<? extends Throwable>> getPermanentExceptions() {
			return this.permanentExceptions;
		}

		public void setPermanentExceptions(List<Class<? extends Throwable>> permanentExceptions) {
			this.permanentExceptions = permanentExceptions;
		}

	}

	public static class Topics {

		/**
		 * Whether missing retry, dead-letter and lock topics are created at startup.
		 */
		private boolean create = true;

		/**
		 * Replication factor of created topics; -1 uses the broker's default.
		 */
		private short replicationFactor = -1;

		/**
		 * Name template of retry topics; {group} is the listener's consumer group,
		 * {topic} the main topic, {delay} the stage delay in its shortest exact unit
		 * (500ms, 30s, 5m, 1h, 1d). Keep {group} in it, so that each group that reads a
		 * topic has a ladder of its own.
		 */
		@NotNull
		@Pattern(regexp = "(" + NAME_PART + "|\\{delay})+",
				message = NAME_PARTS + "\\{group\\}, \\{topic\\} and \\{delay\\}")
		private String retryTemplate = LadderPlan.DEFAULT_RETRY_TEMPLATE;

		/**
		 * Name template of dead-letter topics; {group} is the listener's consumer group,
		 * {topic} the main topic.
		 */
		@NotNull
		@Pattern(regexp = "(" + NAME_PART + ")+", message = NAME_PARTS + "\\{group\\} and \\{topic\\}")
		private String dlqTemplate = LadderPlan.DEFAULT_DLQ_TEMPLATE;

		/**
		 * Name template of lock topics; {group} is the listener's consumer group, {topic}
		 * the main topic.
		 */
		@NotNull
		@Pattern(regexp = "(" + NAME_PART + ")+", message = NAME_PARTS + "\\{group\\} and \\{topic\\}")
		private String lockTemplate = LadderPlan.DEFAULT_LOCK_TEMPLATE;

		/**
		 * Whether startup refuses a ladder whose topics hold records written by another
		 * consumer group (live locks, or among the latest retry and dead-letter records).
		 * Set it to false only to start despite records a group left behind after it
		 * moved to topics of its own; they are never acted on either way.
		 */
		private boolean checkOwnerAtStartup = true;

		/**
		 * Whether startup first looks for records the listener's group left in the retry
		 * topics of releases that named a ladder after its main topic alone
		 * ({topic}.retry.{delay}), and refuses while some wait there. Set it to false
		 * only when the group never used those topics (other groups on an earlier release
		 * still do).
		 */
		private boolean checkUnscopedAtStartup = true;

		/**
		 * Retention of created retry topics. Must be at least twice the longest delay.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration retryRetention = Duration.ofDays(7);

		/**
		 * Retention of created dead-letter topics.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration dlqRetention = Duration.ofDays(28);

		/**
		 * Segment time of created lock topics: compaction only cleans closed segments, so
		 * a short segment keeps the lock topic close to the number of live locks.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration lockSegment = Duration.ofMinutes(10);

		/**
		 * How long tombstones of released locks stay in created lock topics. Must be
		 * longer than the time a lock tailer may take to read the topic from the
		 * beginning.
		 */
		@NotNull
		@MinDuration("0ms")
		private Duration lockDeleteRetention = Duration.ofDays(1);

		public boolean isCreate() {
			return this.create;
		}

		public void setCreate(boolean create) {
			this.create = create;
		}

		public short getReplicationFactor() {
			return this.replicationFactor;
		}

		public void setReplicationFactor(short replicationFactor) {
			this.replicationFactor = replicationFactor;
		}

		public boolean isCheckOwnerAtStartup() {
			return this.checkOwnerAtStartup;
		}

		public void setCheckOwnerAtStartup(boolean checkOwnerAtStartup) {
			this.checkOwnerAtStartup = checkOwnerAtStartup;
		}

		public boolean isCheckUnscopedAtStartup() {
			return this.checkUnscopedAtStartup;
		}

		public void setCheckUnscopedAtStartup(boolean checkUnscopedAtStartup) {
			this.checkUnscopedAtStartup = checkUnscopedAtStartup;
		}

		public String getRetryTemplate() {
			return this.retryTemplate;
		}

		public void setRetryTemplate(String retryTemplate) {
			this.retryTemplate = retryTemplate;
		}

		public String getDlqTemplate() {
			return this.dlqTemplate;
		}

		public void setDlqTemplate(String dlqTemplate) {
			this.dlqTemplate = dlqTemplate;
		}

		public String getLockTemplate() {
			return this.lockTemplate;
		}

		public void setLockTemplate(String lockTemplate) {
			this.lockTemplate = lockTemplate;
		}

		public Duration getRetryRetention() {
			return this.retryRetention;
		}

		public void setRetryRetention(Duration retryRetention) {
			this.retryRetention = retryRetention;
		}

		public Duration getDlqRetention() {
			return this.dlqRetention;
		}

		public void setDlqRetention(Duration dlqRetention) {
			this.dlqRetention = dlqRetention;
		}

		public Duration getLockSegment() {
			return this.lockSegment;
		}

		public void setLockSegment(Duration lockSegment) {
			this.lockSegment = lockSegment;
		}

		public Duration getLockDeleteRetention() {
			return this.lockDeleteRetention;
		}

		public void setLockDeleteRetention(Duration lockDeleteRetention) {
			this.lockDeleteRetention = lockDeleteRetention;
		}

	}

	public static class Consumer {

		/**
		 * Worker threads per listener: records run concurrently across keys and in order
		 * within a key. With virtual threads it may be in the thousands.
		 */
		@Min(1)
		private int concurrency = 4;

		/**
		 * Whether the listeners' workers are virtual threads, which needs Java 21 or
		 * later. Unset follows spring.threads.virtual.enabled; false keeps platform
		 * threads even when that is on.
		 */
		private @Nullable Boolean virtualThreads;

		/**
		 * Records of one partition in flight (running or waiting) before the partition is
		 * paused.
		 */
		@Min(1)
		private int maxInFlightPerPartition = 1000;

		/**
		 * How long one poll waits for records.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration pollTimeout = Duration.ofMillis(100);

		/**
		 * How often offsets of done records are committed.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration commitInterval = Duration.ofSeconds(1);

		/**
		 * How long stopping a listener waits for running handlers.
		 */
		@NotNull
		@MinDuration("0ms")
		private Duration shutdownTimeout = Duration.ofSeconds(30);

		/**
		 * How often a record that waits for an earlier record of its key looks again, in
		 * case a change went unnoticed.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration recheckInterval = Duration.ofSeconds(5);

		/**
		 * A retry due later than this is parked: its payload is dropped from memory and
		 * the record is read again from its stage shortly before it is due. Keeps memory
		 * bounded when a stage holds more waiting records than the in-flight bound.
		 */
		@NotNull
		@MinDuration("1s")
		private Duration parkAfter = Duration.ofSeconds(10);

		/**
		 * How long the result of a listener method that returns one that completes later
		 * (a CompletableFuture, a CompletionStage, a Mono, a Kotlin suspend function) is
		 * waited for before the attempt fails with an AttemptTimeoutException; a
		 * listener's attemptTimeout overrides it.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration attemptTimeout = Duration.ofSeconds(30);

		/**
		 * The most records in one call of a batch listener's method; a listener's
		 * batchSize overrides it.
		 */
		@Min(1)
		private int batchSize = 500;

		/**
		 * How long a batch listener's batch that is not full waits for more records that
		 * may run; 0 takes the records that are ready.
		 */
		@NotNull
		@MinDuration("0ms")
		private Duration batchWait = Duration.ZERO;

		/**
		 * What a call of a batch listener's method means when it throws anything but a
		 * BatchListenerFailedException: bisect splits the batch in halves that run again
		 * until each failing record failed alone; fail-all fails every record of the
		 * batch.
		 */
		@NotNull
		private BatchSettings.Failure batchFailure = BatchSettings.Failure.BISECT;

		public Duration getAttemptTimeout() {
			return this.attemptTimeout;
		}

		public void setAttemptTimeout(Duration attemptTimeout) {
			this.attemptTimeout = attemptTimeout;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

		public Duration getBatchWait() {
			return this.batchWait;
		}

		public void setBatchWait(Duration batchWait) {
			this.batchWait = batchWait;
		}

		public BatchSettings.Failure getBatchFailure() {
			return this.batchFailure;
		}

		public void setBatchFailure(BatchSettings.Failure batchFailure) {
			this.batchFailure = batchFailure;
		}

		public Duration getParkAfter() {
			return this.parkAfter;
		}

		public void setParkAfter(Duration parkAfter) {
			this.parkAfter = parkAfter;
		}

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public @Nullable Boolean getVirtualThreads() {
			return this.virtualThreads;
		}

		public void setVirtualThreads(@Nullable Boolean virtualThreads) {
			this.virtualThreads = virtualThreads;
		}

		public int getMaxInFlightPerPartition() {
			return this.maxInFlightPerPartition;
		}

		public void setMaxInFlightPerPartition(int maxInFlightPerPartition) {
			this.maxInFlightPerPartition = maxInFlightPerPartition;
		}

		public Duration getPollTimeout() {
			return this.pollTimeout;
		}

		public void setPollTimeout(Duration pollTimeout) {
			this.pollTimeout = pollTimeout;
		}

		public Duration getCommitInterval() {
			return this.commitInterval;
		}

		public void setCommitInterval(Duration commitInterval) {
			this.commitInterval = commitInterval;
		}

		public Duration getShutdownTimeout() {
			return this.shutdownTimeout;
		}

		public void setShutdownTimeout(Duration shutdownTimeout) {
			this.shutdownTimeout = shutdownTimeout;
		}

		public Duration getRecheckInterval() {
			return this.recheckInterval;
		}

		public void setRecheckInterval(Duration recheckInterval) {
			this.recheckInterval = recheckInterval;
		}

	}

	public static class Locks {

		/**
		 * How long a lock tailer poll waits for records.
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration tailerPollTimeout = Duration.ofMillis(100);

		/**
		 * How long a lock write or a retry publish may take before it fails (the record
		 * is then delivered again).
		 */
		@NotNull
		@MinDuration("1ms")
		private Duration writeTimeout = Duration.ofSeconds(30);

		public Duration getTailerPollTimeout() {
			return this.tailerPollTimeout;
		}

		public void setTailerPollTimeout(Duration tailerPollTimeout) {
			this.tailerPollTimeout = tailerPollTimeout;
		}

		public Duration getWriteTimeout() {
			return this.writeTimeout;
		}

		public void setWriteTimeout(Duration writeTimeout) {
			this.writeTimeout = writeTimeout;
		}

	}

}
