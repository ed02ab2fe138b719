package io.github.kafkaresilience.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.kafkaresilience.ladder.LadderPlan;
import io.github.kafkaresilience.listener.OrderedRetryListenerRegistry;
import io.github.kafkaresilience.lock.Lock;
import io.github.kafkaresilience.lock.LockCoordinator;
import io.github.kafkaresilience.lock.LockRegistry;
import io.github.kafkaresilience.lock.OperatorCommand;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;

/**
 * What an operator may do through the {@code kafkaresilience} endpoint: retry now or
 * dead-letter now the head of a held key (docs/PROTOCOL.md, rule 11), pause or resume a
 * listener. Every action needs {@code kafka.resilience.console.actions-enabled=true} and, when
 * Spring Security is present, the configured role. Each is audited: logged on
 * {@code kafka.resilience.audit} with who asked (the authenticated principal, or
 * {@code anonymous}) and counted in {@code kafka.resilience.operator.actions} by action and
 * outcome.
 *
 * @since 0.1.0
 */
public class OperatorActions {

	private static final Log audit = LogFactory.getLog("kafka.resilience.audit");

	private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(30);

	private final OrderedRetryListenerRegistry listeners;

	private final LockCoordinator locks;

	private final boolean enabled;

	private final @Nullable String requiredRole;

	private final @Nullable MeterRegistry meters;

	private final Clock clock;

	/**
	 * @param enabled whether actions are enabled at all
	 * @param requiredRole the role an action needs, or {@code null} when no role is checked
	 * (Spring Security is absent)
	 * @param meters where actions are counted, if anywhere
	 */
	public OperatorActions(OrderedRetryListenerRegistry listeners, LockCoordinator locks, boolean enabled,
			@Nullable String requiredRole, @Nullable MeterRegistry meters, Clock clock) {
		this.listeners = listeners;
		this.locks = locks;
		this.enabled = enabled;
		this.requiredRole = requiredRole;
		this.meters = meters;
		this.clock = clock;
	}

	/** Whether actions are enabled (the console shows its buttons only then). */
	public boolean isEnabled() {
		return this.enabled;
	}

	/**
	 * Writes an operator command on the head of a held key.
	 * @param listenerId the listener whose ladder holds the key
	 * @param topic its main topic
	 * @param lockId the head's lock id, as the held keys list it
	 * @throws Refused when the action is not allowed, or the lock is not a head confirmed at its stage
	 */
	public ActionReport command(SecurityContext security, OperatorCommand.Action action, String listenerId, String topic,
			String lockId) {
		String by = authorize(security, action.value(), listenerId);
		LadderPlan plan = plan(listenerId, topic, by, action.value());
		LockRegistry registry = this.locks.registryOf(plan.lockTopic());
		Lock lock = (registry != null) ? registry.find(lockId) : null;
		if (lock == null) {
			throw refuse(404, action.value(), listenerId, by, "no live lock " + lockId + " in '" + plan.lockTopic()
					+ "': its key is no longer held, or the id is wrong");
		}
		if (lock.isMoving() || lock.isPending()) {
			throw refuse(409, action.value(), listenerId, by, "lock " + lockId + " is " + (lock.isPending()
					? "a replay waiting for admission" : "moving") + "; act on it once it is confirmed at its stage");
		}
		Lock before = registry.predecessor(lock);
		if (before != null) {
			throw refuse(409, action.value(), listenerId, by, "lock " + lockId + " is not the head of its key: lock "
					+ before.id() + " of the same key comes first; act on that one");
		}
		OperatorCommand command = OperatorCommand.on(lock, action, by, UUID.randomUUID().toString(), this.clock.instant());
		try {
			registry.submit(command).get(WRITE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw refuse(503, action.value(), listenerId, by, "interrupted while writing the command");
		}
		catch (ExecutionException | TimeoutException ex) {
			throw refuse(503, action.value(), listenerId, by, "could not write the command to '" + plan.lockTopic()
					+ "': " + ex.getMessage());
		}
		audit.info("Operator '" + by + "' asked " + action.value() + " on key '" + KafkaResilienceEndpoint.keyText(lock.key())
				+ "' (lock " + lockId + " at stage " + lock.stage() + " offset " + lock.at() + ") of listener '"
				+ listenerId + "', topic '" + topic + "': command " + command.id() + " written");
		count(action.value(), listenerId, "accepted");
		return new ActionReport(action.value(), "accepted", by, command.requested(), listenerId, topic, lockId,
				KafkaResilienceEndpoint.keyText(lock.key()), command.id());
	}

	/** Pauses a listener (or resumes it when {@code pause} is {@code false}). */
	public ActionReport pause(SecurityContext security, String listenerId, boolean pause) {
		String action = pause ? "pause" : "resume";
		String by = authorize(security, action, listenerId);
		if (this.listeners.container(listenerId) == null) {
			throw refuse(404, action, listenerId, by, "no listener '" + listenerId + "' here");
		}
		if (pause) {
			this.listeners.pause(listenerId);
		}
		else {
			this.listeners.resume(listenerId);
		}
		audit.info("Operator '" + by + "' asked " + action + " of listener '" + listenerId + "'");
		count(action, listenerId, "accepted");
		return new ActionReport(action, "accepted", by, this.clock.instant(), listenerId, null, null, null, null);
	}

	private String authorize(SecurityContext security, String action, String listenerId) {
		String by = (security.getPrincipal() != null) ? security.getPrincipal().getName() : "anonymous";
		if (!this.enabled) {
			throw refuse(403, action, listenerId, by, "actions are disabled; set kafka.resilience.console.actions-enabled=true");
		}
		if (this.requiredRole != null && !security.isUserInRole(this.requiredRole)) {
			throw refuse(403, action, listenerId, by, "needs role " + this.requiredRole
					+ " (kafka.resilience.console.role)");
		}
		return by;
	}

	private LadderPlan plan(String listenerId, String topic, String by, String action) {
		if (this.listeners.container(listenerId) == null) {
			throw refuse(404, action, listenerId, by, "no listener '" + listenerId + "' here");
		}
		return this.listeners.plans(listenerId)
			.stream()
			.filter((plan) -> plan.mainTopic().equals(topic))
			.findFirst()
			.orElseThrow(() -> refuse(404, action, listenerId, by, "listener '" + listenerId + "' does not consume '"
					+ topic + "'"));
	}

	private Refused refuse(int status, String action, String listenerId, String by, String why) {
		audit.warn("Operator '" + by + "' was refused " + action + " on listener '" + listenerId + "': " + why);
		count(action, listenerId, "refused");
		return new Refused(status, action + " refused: " + why);
	}

	private void count(String action, String listenerId, String outcome) {
		MeterRegistry registry = this.meters;
		if (registry != null) {
			Counter.builder("kafka.resilience.operator.actions")
				.description("Operator actions through the kafkaresilience endpoint, by action and outcome")
				.tag("action", action)
				.tag("listener", listenerId)
				.tag("outcome", outcome)
				.register(registry)
				.increment();
		}
	}

	/**
	 * What an action did.
	 * @param action {@code retry-now}, {@code dead-letter-now}, {@code pause} or {@code resume}
	 * @param outcome {@code accepted}
	 * @param by who asked
	 * @param at when
	 * @param listener the listener
	 * @param topic the main topic of a command
	 * @param lockId the lock of a command
	 * @param key the key of a command
	 * @param commandId the id of the command written
	 */
	public record ActionReport(String action, String outcome, String by, Instant at, String listener,
			@Nullable String topic, @Nullable String lockId, @Nullable String key, @Nullable String commandId) {
	}

	/** An action that was not taken, with the HTTP status that says why. */
	public static final class Refused extends RuntimeException {

		private final int status;

		Refused(int status, String message) {
			super(message);
			this.status = status;
		}

		public int status() {
			return this.status;
		}

	}

}
