package io.github.kafkaresilience.internal.outage;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

import io.github.kafkaresilience.DependencyUnavailableException;
import io.github.kafkaresilience.ladder.AsyncBatchHandler;
import io.github.kafkaresilience.ladder.AsyncRecordHandler;
import io.github.kafkaresilience.ladder.BatchHandler;
import io.github.kafkaresilience.ladder.BatchResult;
import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.ladder.RecordHandler;
import io.github.kafkaresilience.internal.support.Backoff;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * Tells, for one listener, a dependency that is down for every key from failures of some
 * keys. It watches every run of the handler: it opens when nearly every first attempt
 * failed transiently across several keys for a while ({@link OutageSettings}), or at once
 * when the handler says that its dependency is unavailable
 * ({@link DependencyUnavailableException}, or Resilience4j's
 * {@code CallNotPermittedException}). While it is open, the listener holds its records
 * instead of moving them into the ladder, and runs one of them now and then as a probe;
 * the probe's success closes it. Thread-safe.
 *
 * @since 0.1.0
 */
public final class OutageBreaker {

	private static final Log logger = LogFactory.getLog(OutageBreaker.class);

	/**
	 * Resilience4j's exception for a call its open circuit breaker did not let through.
	 */
	static final String CALL_NOT_PERMITTED = "io.github.resilience4j.circuitbreaker.CallNotPermittedException";

	private final String listenerId;

	private final OutageSettings settings;

	private final FailureClassifier classifier;

	private final Clock clock;

	private final FailureEpisode episode;

	private volatile boolean open;

	/**
	 * Half open: the hold ended without a probe (no record was held to probe with, as
	 * after a rebalance during the hold), and the next first attempt decides: a transient
	 * failure opens the breaker again at once, a success closes it.
	 */
	private volatile boolean halfOpen;

	private volatile @Nullable String reason;

	private volatile @Nullable Instant openedAt;

	/**
	 * The latest transient failure of a first attempt, for the reason the breaker gives.
	 */
	private volatile @Nullable Throwable lastFailure;

	/** Probes that failed since the breaker opened. */
	private int failedProbes;

	private long opened;

	private Consumer<Boolean> onChange = (nowOpen) -> {
	};

	public OutageBreaker(String listenerId, OutageSettings settings, FailureClassifier classifier, Clock clock) {
		this.listenerId = listenerId;
		this.settings = settings;
		this.classifier = classifier;
		this.clock = clock;
		this.episode = new FailureEpisode(settings.window().toMillis(), settings.minimumKeys());
	}

	/**
	 * The listener's handler for one main topic, with every run's outcome seen by this
	 * breaker. Only first attempts, of records read from the main topic, count in its
	 * window: retries are of records that failed already, so when traffic thins out they
	 * are mostly of the keys that keep failing, and would make a few bad keys look like
	 * an outage. A failure saying that the dependency is unavailable opens it from any
	 * attempt.
	 */
	public RecordHandler observing(RecordHandler handler, String mainTopic) {
		return (delivery) -> {
			HandlerResult result = handler.handle(delivery);
			attempted(delivery, result, mainTopic.equals(delivery.topic()));
			return result;
		};
	}

	/**
	 * A handler whose results complete later, whose records' outcomes this breaker counts
	 * once they completed, as {@link #observing(RecordHandler, String)} counts a record
	 * handler's.
	 */
	public AsyncRecordHandler observing(AsyncRecordHandler handler, String mainTopic) {
		return (delivery) -> handler.start(delivery).thenApply((completion) -> () -> {
			AsyncRecordHandler.Finished finished = completion.finish();
			attempted(delivery, finished.result(), mainTopic.equals(delivery.topic()));
			return finished;
		});
	}

	/**
	 * A batch handler whose records' outcomes this breaker counts, as
	 * {@link #observing(RecordHandler, String)} counts a record handler's.
	 */
	public BatchHandler observing(BatchHandler handler, String mainTopic) {
		return (records) -> {
			BatchResult ran = handler.handle(records);
			attempted(records, ran, mainTopic);
			return ran;
		};
	}

	/**
	 * A batch handler whose results complete later, whose records' outcomes this breaker
	 * counts once the batch's result completed, as
	 * {@link #observing(BatchHandler, String)} counts them.
	 */
	public AsyncBatchHandler observing(AsyncBatchHandler handler, String mainTopic) {
		return (records, worker) -> handler.start(records, worker).thenApply((ran) -> {
			attempted(records, ran, mainTopic);
			return ran;
		});
	}

	private void attempted(List<Delivery> records, BatchResult ran, String mainTopic) {
		for (int i = 0; i < ran.results().size(); i++) {
			HandlerResult result = ran.results().get(i);
			if (result != null) {
				Delivery delivery = records.get(i);
				attempted(delivery, result, mainTopic.equals(delivery.topic()));
			}
		}
	}

	/**
	 * A record of the main topic follows its key into the ladder without running, its key
	 * being held: while transient failures are being counted, it counts with them. In an
	 * outage every key fails once and is held from then on, so its later records are what
	 * keeps showing the outage; without them a listener with fewer keys than the attempts
	 * the breaker needs would never open it.
	 */
	public void followed(Delivery record) {
		if (!this.settings.enabled() || this.open || !this.episode.running()) {
			return;
		}
		Bytes key = record.businessKey();
		boolean trip;
		synchronized (this) {
			long now = this.clock.millis();
			this.episode.held((key != null) ? key.hashCode() : 0);
			trip = trips(now);
		}
		if (trip) {
			open(tripReason());
		}
	}

	/**
	 * How long to put off the failure handling of a first attempt that failed
	 * transiently: until the failure episode it belongs to has lasted the minimum
	 * duration, when the breaker can tell a burst from an outage. If it opens by then,
	 * the record is held instead of moved, and its key stays out of the ladder; otherwise
	 * its failure is handled as usual, that much later. {@code -1} when the failure is
	 * not put off: outage mode off, the breaker open (the record is held at once), or a
	 * failure that is not transient.
	 */
	public long deferral(@Nullable HandlerResult result) {
		if (!this.settings.enabled() || this.open || result == null || result.failure() == null
				|| result.outcome() != HandlerResult.Outcome.FAILURE || this.classifier.isPermanent(result.failure())) {
			return -1;
		}
		synchronized (this) {
			if (!this.episode.running()) {
				return -1;
			}
			long decided = this.episode.start() + this.settings.minimumDuration().toMillis();
			return Math.max(0, decided - this.clock.millis()) + 1;
		}
	}

	/**
	 * Looks at the running failure episode now, without waiting for another record: opens
	 * the breaker when it says that every key fails. Called when put-off failure handling
	 * is due, since records held behind a failing record wait in memory and are not
	 * counted as they come in.
	 */
	public void evaluate() {
		if (!this.settings.enabled() || this.open || !this.episode.running()) {
			return;
		}
		boolean trip;
		synchronized (this) {
			trip = trips(this.clock.millis());
		}
		if (trip) {
			open(tripReason());
		}
	}

	/**
	 * Tells the container when the breaker opens ({@code true}) or closes
	 * ({@code false}).
	 */
	public synchronized void onChange(Consumer<Boolean> onChange) {
		this.onChange = onChange;
	}

	public boolean isOpen() {
		return this.open;
	}

	/** Why the breaker opened; {@code null} while it is closed. */
	public @Nullable String reason() {
		return this.open ? this.reason : null;
	}

	/** When the breaker opened; {@code null} while it is closed. */
	public @Nullable Instant openedAt() {
		return this.open ? this.openedAt : null;
	}

	/** How many times the breaker opened since the listener was created. */
	public synchronized long timesOpened() {
		return this.opened;
	}

	public OutageSettings settings() {
		return this.settings;
	}

	/**
	 * Whether a run's failure is held instead of handled as a failure: its record stays
	 * where it is, without an attempt counted, until the breaker closes. A failure saying
	 * that the dependency is unavailable always is; while the breaker is open, so is
	 * every transient failure. A permanent failure, or a record that could not be
	 * deserialized, never is: those belong to the record, not to the dependency.
	 */
	public boolean holds(@Nullable HandlerResult result) {
		if (!this.settings.enabled() || result == null || result.outcome() != HandlerResult.Outcome.FAILURE
				|| result.failure() == null) {
			return false;
		}
		Throwable failure = result.failure();
		if (isUnavailable(failure)) {
			return true;
		}
		return this.open && !this.classifier.isPermanent(failure);
	}

	/**
	 * Ends the hold without a probe, as no record is held to probe with (a rebalance
	 * during the hold gave the held records' partitions away): records are taken again,
	 * and the first attempt of a record from the main topic decides. A transient failure
	 * opens the breaker again at once and is held; a success closes it.
	 */
	public void halfOpen(String why) {
		Consumer<Boolean> notify;
		synchronized (this) {
			if (!this.open) {
				return;
			}
			this.open = false;
			this.halfOpen = true;
			notify = this.onChange;
		}
		logger.info(
				"Listener '" + this.listenerId + "' takes records again to see whether its dependency is back: " + why);
		notify.accept(false);
	}

	/**
	 * The pause before the next probe: the probe interval, doubled after each failed
	 * probe up to the longest, less up to a fifth at random so that instances do not
	 * probe together.
	 */
	public synchronized Duration nextProbe() {
		long millis = Backoff
			.after(this.failedProbes + 1, this.settings.probeInterval(), this.settings.maxProbeInterval())
			.toMillis();
		return Duration.ofMillis(millis - ThreadLocalRandom.current().nextLong(millis / 5 + 1));
	}

	/** A probe failed as the outage goes on: the breaker stays open and probes later. */
	public synchronized void probeFailed(Throwable failure) {
		this.failedProbes++;
		logger.info("Listener '" + this.listenerId + "' is still holding: probe " + this.failedProbes + " failed with "
				+ failure);
	}

	/** Closes the breaker: a probe succeeded, or nothing is left to probe with. */
	public void close(String why) {
		Consumer<Boolean> notify;
		synchronized (this) {
			if (!this.open) {
				return;
			}
			this.open = false;
			this.halfOpen = false;
			this.failedProbes = 0;
			this.episode.clear();
			notify = this.onChange;
		}
		logger.warn("Listener '" + this.listenerId + "' resumes after holding since " + this.openedAt + ": " + why);
		notify.accept(false);
	}

	private void attempted(Delivery delivery, HandlerResult result, boolean firstAttempt) {
		if (!this.settings.enabled()) {
			return;
		}
		Throwable failure = result.failure();
		if (this.open && result.outcome() == HandlerResult.Outcome.SUCCESS) {
			close("a record succeeded on " + delivery + ": the dependency answers again");
			return;
		}
		Throwable unavailable = (result.outcome() == HandlerResult.Outcome.FAILURE && failure != null)
				? unavailable(failure) : null;
		if (unavailable != null) {
			open("the handler said its dependency is unavailable: " + unavailable);
			return; // not an attempt of the record
		}
		if (!firstAttempt) {
			return;
		}
		boolean failedTransiently = result.outcome() == HandlerResult.Outcome.FAILURE && failure != null
				&& !this.classifier.isPermanent(failure);
		if (this.halfOpen) {
			if (failedTransiently) {
				open("the first attempt after holding failed too, with " + failure);
			}
			else {
				synchronized (this) {
					this.halfOpen = false;
					this.episode.clear();
				}
				logger.warn("Listener '" + this.listenerId + "' resumes: a record succeeded after holding since "
						+ this.openedAt);
			}
			return;
		}
		if (!failedTransiently) {
			this.episode.succeeded(); // no lock: a healthy listener comes here for every
										// record
			return;
		}
		Bytes key = delivery.businessKey();
		boolean trip;
		synchronized (this) {
			long now = this.clock.millis();
			this.lastFailure = failure;
			this.episode.failed(now, (key != null) ? key.hashCode() : 0);
			trip = trips(now);
		}
		if (trip) {
			open(tripReason());
		}
	}

	/** Whether the running episode opens the breaker now; call it holding the monitor. */
	private boolean trips(long now) {
		return !this.open && this.episode.tripped(now, this.settings.minimumDuration().toMillis(),
				this.settings.minimumAttempts(), this.settings.failureRate(), this.settings.minimumKeys());
	}

	private String tripReason() {
		return "for " + this.settings.minimumDuration().toMillis() + " ms at least "
				+ Math.round(this.settings.failureRate() * 100) + " % of the records failed or were held behind a "
				+ "failure, across at least " + this.settings.minimumKeys() + " keys; the last failure: "
				+ this.lastFailure;
	}

	private void open(String why) {
		Consumer<Boolean> notify;
		synchronized (this) {
			if (this.open) {
				return;
			}
			this.open = true;
			this.halfOpen = false;
			this.reason = why;
			this.openedAt = this.clock.instant();
			this.failedProbes = 0;
			this.opened++;
			notify = this.onChange;
		}
		logger.warn("Listener '" + this.listenerId + "' holds its records: " + why + ". It moves none into its retry "
				+ "topics and takes none from its topics until a probe succeeds");
		notify.accept(true);
	}

	/**
	 * Whether a failure says that the dependency is unavailable: a
	 * {@link DependencyUnavailableException} or Resilience4j's
	 * {@code CallNotPermittedException}, itself or as a cause.
	 */
	public static boolean isUnavailable(Throwable failure) {
		return unavailable(failure) != null;
	}

	private static @Nullable Throwable unavailable(Throwable failure) {
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		for (Throwable current = failure; current != null && seen.add(current); current = current.getCause()) {
			if (current instanceof DependencyUnavailableException
					|| CALL_NOT_PERMITTED.equals(current.getClass().getName())) {
				return current;
			}
		}
		return null;
	}

}
