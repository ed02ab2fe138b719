package io.github.kafkaresilience.internal.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.Lock;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import io.github.kafkaresilience.internal.lock.OperatorCommand;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;

/**
 * What an operator may do through the {@code kafkaresilience} endpoint: retry now or
 * dead-letter now the head of a held key (docs/PROTOCOL.md, rule 11), pause or resume a
 * listener, and send a replay. Every action needs
 * {@code kafka.resilience.console.actions-enabled=true} and, when Spring Security is
 * present, the configured role. Each is audited: logged on {@code kafka.resilience.audit}
 * with who asked (the authenticated principal, or {@code anonymous}) and counted in
 * {@code kafka.resilience.operator.actions} by action, listener and outcome. What a
 * request names is checked against the listeners, ladders and locks here before it is
 * logged or counted.
 *
 * @since 0.1.0
 */
public class OperatorActions {

	private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(30);

	private static final Log logger = LogFactory.getLog(OperatorActions.class);

	private final ListenerRegistry listeners;

	private final LockCoordinator locks;

	private final boolean enabled;

	private final @Nullable String requiredRole;

	private final OperatorAudit audit;

	private final Clock clock;

	/**
	 * @param enabled whether actions are enabled at all
	 * @param requiredRole the role an action needs, or {@code null} when no role is
	 * checked (Spring Security is absent)
	 * @param meters where actions are counted, if anywhere
	 */
	public OperatorActions(ListenerRegistry listeners, LockCoordinator locks, boolean enabled,
			@Nullable String requiredRole, @Nullable MeterRegistry meters, Clock clock) {
		this.listeners = listeners;
		this.locks = locks;
		this.enabled = enabled;
		this.requiredRole = requiredRole;
		this.audit = new OperatorAudit(meters);
		this.clock = clock;
	}

	/** Whether actions are enabled (the console shows its buttons only then). */
	public boolean isEnabled() {
		return this.enabled;
	}

	/**
	 * Whether the caller has the operator role: always {@code false} without Spring
	 * Security, which has no roles to check.
	 */
	public boolean isOperator(SecurityContext security) {
		return this.requiredRole != null && security.isUserInRole(this.requiredRole);
	}

	/**
	 * Writes an operator command on the head of a held key.
	 * @param listenerId the listener whose ladder holds the key
	 * @param topic its main topic
	 * @param lockId the head's lock id, as the held keys list it
	 * @throws Refused when the action is not allowed, or the lock is not a head confirmed
	 * at its stage
	 */
	public ActionReport command(SecurityContext security, OperatorCommand.Action action, String listenerId,
			String topic, String lockId) {
		String name = action.value();
		String listener = known(listenerId);
		String tag = tag(listener);
		LadderPlan plan = (listener != null) ? plan(listener, topic) : null;
		LockRegistry registry = (plan != null) ? this.locks.registryOf(plan.lockTopic()) : null;
		Lock lock = (registry != null) ? registry.find(lockId) : null;
		String subject = "lock " + ((lock != null) ? lock.id() : "'" + OperatorAudit.shown(lockId) + "'")
				+ " of listener " + listenerText(listener, listenerId) + ", topic "
				+ ((plan != null) ? "'" + plan.mainTopic() + "'" : "'" + OperatorAudit.shown(topic) + "'");
		String by = authorize(security, name, tag, subject);
		if (listener == null) {
			throw this.audit.refused(404, name, tag, by, subject, "no such listener here");
		}
		if (plan == null) {
			throw this.audit.refused(404, name, tag, by, subject, "the listener does not consume that topic");
		}
		if (registry == null || lock == null) {
			throw this.audit.refused(404, name, tag, by, subject,
					"no such live lock in '" + plan.lockTopic() + "': its key is no longer held, or the id is wrong");
		}
		if (lock.isMoving() || lock.isPending()) {
			throw this.audit.refused(409, name, tag, by, subject,
					"the lock is " + (lock.isPending() ? "a replay waiting for admission" : "moving")
							+ "; act on it once it is confirmed at its stage");
		}
		Lock before = registry.predecessor(lock);
		if (before != null) {
			throw this.audit.refused(409, name, tag, by, subject, "the lock is not the head of its key: lock "
					+ before.id() + " of the same key comes first; act on that one");
		}
		OperatorCommand command = OperatorCommand.on(lock, action, by, UUID.randomUUID().toString(),
				this.clock.instant());
		try {
			registry.submit(command).get(WRITE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw this.audit.refused(503, name, tag, by, subject, "interrupted while writing the command");
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Could not write operator command " + command.id() + " to '" + plan.lockTopic() + "'", ex);
			throw this.audit.refused(503, name, tag, by, subject,
					"could not write the command to '" + plan.lockTopic() + "'; the server log says why");
		}
		String key = ConsoleViews.keyText(lock.key());
		this.audit.accepted(name, tag,
				"Operator '" + OperatorAudit.shown(by) + "' asked " + name + " on key '" + OperatorAudit.shown(key)
						+ "' (lock " + lock.id() + " at stage " + lock.stage() + " offset " + lock.at()
						+ ") of listener '" + listener + "', topic '" + plan.mainTopic() + "': command " + command.id()
						+ " written");
		return new ActionReport(name, "accepted", by, command.requested(), listener, plan.mainTopic(), lock.id(), key,
				command.id());
	}

	/** Pauses a listener (or resumes it when {@code pause} is {@code false}). */
	public ActionReport pause(SecurityContext security, String listenerId, boolean pause) {
		String action = pause ? "pause" : "resume";
		String listener = known(listenerId);
		String subject = "listener " + listenerText(listener, listenerId);
		String by = authorize(security, action, tag(listener), subject);
		if (listener == null) {
			throw this.audit.refused(404, action, tag(listener), by, subject, "no such listener here");
		}
		if (pause) {
			this.listeners.pause(listener);
		}
		else {
			this.listeners.resume(listener);
		}
		this.audit.accepted(action, listener,
				"Operator '" + OperatorAudit.shown(by) + "' asked " + action + " of listener '" + listener + "'");
		return new ActionReport(action, "accepted", by, this.clock.instant(), listener, null, null, null, null);
	}

	/**
	 * Checks that the caller may act at all (actions enabled, and the role with Spring
	 * Security); a refusal is audited.
	 * @param listenerTag the listener the action is about, {@value OperatorAudit#UNKNOWN}
	 * when the request names none of this application
	 * @param subject what the action is about, its values from the request shown escaped
	 * @return who asked
	 */
	String authorize(SecurityContext security, String action, String listenerTag, String subject) {
		String by = OperatorAudit.who(security);
		if (!this.enabled) {
			throw this.audit.refused(403, action, listenerTag, by, subject,
					"actions are disabled; set kafka.resilience.console.actions-enabled=true");
		}
		if (this.requiredRole != null && !security.isUserInRole(this.requiredRole)) {
			throw this.audit.refused(403, action, listenerTag, by, subject,
					"needs role " + this.requiredRole + " (kafka.resilience.console.role)");
		}
		return by;
	}

	OperatorAudit audit() {
		return this.audit;
	}

	/** The listener's id when it is one of this application, otherwise {@code null}. */
	private @Nullable String known(String listenerId) {
		return (this.listeners.container(listenerId) != null) ? listenerId : null;
	}

	private static String tag(@Nullable String listener) {
		return (listener != null) ? listener : OperatorAudit.UNKNOWN;
	}

	private static String listenerText(@Nullable String listener, String asked) {
		return (listener != null) ? "'" + listener + "'" : "'" + OperatorAudit.shown(asked) + "' (unknown)";
	}

	private @Nullable LadderPlan plan(String listenerId, String topic) {
		return this.listeners.plans(listenerId)
			.stream()
			.filter((plan) -> plan.mainTopic().equals(topic))
			.findFirst()
			.orElse(null);
	}

	/**
	 * What an action did.
	 *
	 * @param action {@code retry-now}, {@code dead-letter-now}, {@code pause} or
	 * {@code resume}
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
