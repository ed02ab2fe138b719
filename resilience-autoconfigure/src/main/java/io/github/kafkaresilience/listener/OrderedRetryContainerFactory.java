package io.github.kafkaresilience.listener;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.container.FairShareSettings;
import io.github.kafkaresilience.container.RateLimitSettings;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.FailureClassifier;
import org.apache.kafka.clients.admin.Admin;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

/**
 * The settings of the containers of {@code @OrderedRetryListener} endpoints, as
 * spring-kafka's listener container factory holds those of {@code @KafkaListener}
 * containers: consumption, batches, delays and attempts, the dual-write mode, the failure
 * classifier, observers and the customizers, applied in order. An application gets one,
 * {@code orderedRetryContainerFactory}, configured from {@code kafka.resilience.*}; a
 * listener that names another in {@code containerFactory} gets that one's. Another
 * factory is made the way Spring Boot makes the first: <pre class="code">
 * &#64;Bean
 * OrderedRetryContainerFactory transactional(OrderedRetryContainerFactoryConfigurer configurer) {
 *     OrderedRetryContainerFactory factory = new OrderedRetryContainerFactory();
 *     configurer.configure(factory);
 *     factory.setDualWrite(DualWrite.TRANSACTION);
 *     return factory;
 * }
 * </pre> A factory that was not configured so creates no containers.
 *
 * @since 0.1.0
 */
public class OrderedRetryContainerFactory {

	private @Nullable ContainerSettings containerSettings;

	private @Nullable List<Duration> delays;

	/** How long a result that completes later is waited for, unless set. */
	public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(30);

	private BatchSettings batchSettings = BatchSettings.DEFAULTS;

	private @Nullable TenantResolver tenantResolver;

	private FairShareSettings fairShare = FairShareSettings.DEFAULTS;

	private RateLimitSettings rateLimit = RateLimitSettings.NONE;

	private Duration attemptTimeout = DEFAULT_ATTEMPT_TIMEOUT;

	private @Nullable Integer maxAttempts;

	private @Nullable DualWrite dualWrite;

	private FailureClassifier classifier = new FailureClassifier(List.of());

	private double dueTimeJitter;

	private ResilienceObserver observer = ResilienceObserver.NONE;

	private @Nullable ConsumerAwareRebalanceListener rebalanceListener;

	private Clock clock = Clock.systemUTC();

	private @Nullable ReaperSettings reaper;

	private boolean parking = true;

	private @Nullable Duration idleEventInterval;

	private List<OrderedRetryContainerCustomizer> customizers = List.of();

	/**
	 * How zombie locks are reaped.
	 *
	 * @param interval how often each listener looks for zombie locks
	 * @param grace how long a lock must be unchanged before it may be reaped
	 * @param admins creates the admin client a listener's reapers share
	 */
	public record ReaperSettings(Duration interval, Duration grace, Supplier<Admin> admins) {
	}

	/**
	 * How the containers consume; a listener's {@code concurrency} overrides the one
	 * here.
	 */
	public void setContainerSettings(ContainerSettings containerSettings) {
		this.containerSettings = containerSettings;
	}

	/**
	 * How the containers of batch listeners gather their batches; a listener's
	 * {@code batchSize} overrides the size here.
	 */
	public void setBatchSettings(BatchSettings batchSettings) {
		this.batchSettings = batchSettings;
	}

	/** How the containers of batch listeners gather their batches. */
	public BatchSettings getBatchSettings() {
		return this.batchSettings;
	}

	/**
	 * How long a listener method's result that completes later (a
	 * {@code CompletableFuture}, a {@code Mono}, a Kotlin {@code suspend} function) is
	 * waited for before its attempt fails; a listener's {@code attemptTimeout} overrides
	 * it. Positive.
	 */
	public void setAttemptTimeout(Duration attemptTimeout) {
		if (attemptTimeout.isZero() || attemptTimeout.isNegative()) {
			throw new IllegalArgumentException("The attempt timeout must be positive, not " + attemptTimeout);
		}
		this.attemptTimeout = attemptTimeout;
	}

	/** How long results that complete later are waited for, unless a listener says. */
	public Duration getAttemptTimeout() {
		return this.attemptTimeout;
	}

	/**
	 * The stage delays of listeners that name none; none at all sends every record that
	 * fails to the dead-letter topic.
	 */
	public void setDelays(List<Duration> delays) {
		this.delays = List.copyOf(delays);
	}

	/**
	 * The attempts of listeners that name none; {@code null} for one more than the
	 * stages.
	 */
	public void setMaxAttempts(@Nullable Integer maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	/**
	 * How the containers keep a move's writes to the lock topic and the ladder's topics
	 * consistent with the offsets they commit.
	 */
	public void setDualWrite(DualWrite dualWrite) {
		this.dualWrite = dualWrite;
	}

	/** Tells permanent failures from transient ones. */
	public void setClassifier(FailureClassifier classifier) {
		this.classifier = classifier;
	}

	/**
	 * Spreads retry due times by up to this share of their stage's delay.
	 * @param share between 0 (none, the default) and 1
	 */
	public void setDueTimeJitter(double share) {
		if (!(share >= 0 && share <= 1)) {
			throw new IllegalArgumentException("kafka.resilience.retry.jitter must be between 0 and 1, was " + share);
		}
		this.dueTimeJitter = share;
	}

	/** Hears what the containers do: meters, the health indicator. */
	public void setObserver(ResilienceObserver observer) {
		this.observer = observer;
	}

	/** The application's rebalance listener, called after the library's own. */
	public void setRebalanceListener(@Nullable ConsumerAwareRebalanceListener rebalanceListener) {
		this.rebalanceListener = rebalanceListener;
	}

	public void setClock(Clock clock) {
		this.clock = clock;
	}

	/** How zombie locks are reaped; {@code null} for never. */
	public void setReaper(@Nullable ReaperSettings reaper) {
		this.reaper = reaper;
	}

	/**
	 * Whether retries due far ahead are parked and read again with a consumer of each
	 * listener's own (the default); the records of a listener that read them again are
	 * not held in memory.
	 */
	public void setParking(boolean parking) {
		this.parking = parking;
	}

	/**
	 * Makes containers publish a {@code ListenerContainerIdleEvent} when they have
	 * received no record for this long, as
	 * {@code spring.kafka.listener.idle-event-interval} does.
	 */
	public void setIdleEventInterval(@Nullable Duration idleEventInterval) {
		this.idleEventInterval = idleEventInterval;
	}

	/** Customize each container once it is created, in this order. */
	public void setContainerCustomizers(List<OrderedRetryContainerCustomizer> customizers) {
		this.customizers = List.copyOf(customizers);
	}

	/**
	 * Finds the tenant of the records of every listener that names no way of its own:
	 * their listeners then share their workers and partitions fairly between tenants.
	 * {@code null} (the default) for records without tenants.
	 */
	public void setTenantResolver(@Nullable TenantResolver tenantResolver) {
		this.tenantResolver = tenantResolver;
	}

	public @Nullable TenantResolver getTenantResolver() {
		return this.tenantResolver;
	}

	/** How listeners whose records have tenants share between them. */
	public void setFairShare(FairShareSettings fairShare) {
		this.fairShare = fairShare;
	}

	public FairShareSettings getFairShare() {
		return this.fairShare;
	}

	/**
	 * The most records a second every listener hands to its handler, unless it sets its
	 * own {@code rateLimit}; {@link RateLimitSettings#NONE} (the default) for no limit.
	 */
	public void setRateLimit(RateLimitSettings rateLimit) {
		this.rateLimit = rateLimit;
	}

	public RateLimitSettings getRateLimit() {
		return this.rateLimit;
	}

	/** What customizes each container, in order. */
	public List<OrderedRetryContainerCustomizer> getContainerCustomizers() {
		return this.customizers;
	}

	/** How the containers of this factory consume. */
	public ContainerSettings getContainerSettings() {
		return required(this.containerSettings, "container settings");
	}

	/** How the containers of this factory keep a move's writes consistent. */
	public DualWrite getDualWrite() {
		return required(this.dualWrite, "dual-write mode");
	}

	/** The stage delays of listeners that name none. */
	public List<Duration> getDelays() {
		return required(this.delays, "stage delays");
	}

	/** Tells permanent failures from transient ones. */
	public FailureClassifier getClassifier() {
		return this.classifier;
	}

	public @Nullable Integer getMaxAttempts() {
		return this.maxAttempts;
	}

	public double getDueTimeJitter() {
		return this.dueTimeJitter;
	}

	public @Nullable ReaperSettings getReaper() {
		return this.reaper;
	}

	public boolean isParking() {
		return this.parking;
	}

	public @Nullable Duration getIdleEventInterval() {
		return this.idleEventInterval;
	}

	/** Hears what the containers do. */
	public ResilienceObserver getObserver() {
		return this.observer;
	}

	/** The application's rebalance listener, or {@code null}. */
	public @Nullable ConsumerAwareRebalanceListener getRebalanceListener() {
		return this.rebalanceListener;
	}

	public Clock getClock() {
		return this.clock;
	}

	private static <T> T required(@Nullable T value, String what) {
		if (value == null) {
			throw new IllegalStateException("This OrderedRetryContainerFactory has no " + what
					+ "; configure it with OrderedRetryContainerFactoryConfigurer.configure(factory) first");
		}
		return value;
	}

}
