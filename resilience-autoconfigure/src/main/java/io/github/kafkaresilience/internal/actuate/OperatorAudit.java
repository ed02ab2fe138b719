package io.github.kafkaresilience.internal.actuate;

import io.github.kafkaresilience.internal.support.EscapedText;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;

/**
 * The audit of operators' writes: one line per request on {@code kafka.resilience.audit}
 * (INFO when taken, WARN when refused or failed) and the counter
 * {@code kafka.resilience.operator.actions} by action, listener and outcome. A line never
 * holds a request's text unescaped ({@link EscapedText}), and a counter is tagged only
 * with a listener of this application, or {@value #UNKNOWN}: a request cannot forge a
 * line nor make a meter series of its own.
 */
final class OperatorAudit {

	/** The listener tag of a request that names no listener of this application. */
	static final String UNKNOWN = "unknown";

	/** The most characters of one value of a request a line shows. */
	private static final int MAX_SHOWN = 200;

	private static final Log audit = LogFactory.getLog("kafka.resilience.audit");

	private final @Nullable MeterRegistry meters;

	OperatorAudit(@Nullable MeterRegistry meters) {
		this.meters = meters;
	}

	/** Who asked: the authenticated principal, or {@code anonymous}. */
	static String who(SecurityContext security) {
		return (security.getPrincipal() != null) ? security.getPrincipal().getName() : "anonymous";
	}

	/** A value of a request, escaped and cut to a length fit for a line. */
	static String shown(@Nullable Object value) {
		return EscapedText.of(value, MAX_SHOWN);
	}

	/** Logs an action taken and counts it. */
	void accepted(String action, String listenerTag, String line) {
		audit.info(EscapedText.of(line));
		count(action, listenerTag, "accepted");
	}

	/**
	 * Logs a refused request and counts it.
	 * @param subject what it was about, its values already {@link #shown(Object) shown}
	 * @return the refusal to throw, with the status that says why
	 */
	OperatorActions.Refused refused(int status, String action, String listenerTag, String by, String subject,
			@Nullable String why) {
		audit
			.warn(EscapedText.of("Operator '" + shown(by) + "' was refused " + action + " on " + subject + ": " + why));
		count(action, listenerTag, "refused");
		return new OperatorActions.Refused(status, action + " refused: " + why);
	}

	/** Logs an action that was taken and failed part way, and counts it. */
	void failed(String action, String listenerTag, String line) {
		audit.warn(EscapedText.of(line));
		count(action, listenerTag, "failed");
	}

	private void count(String action, String listenerTag, String outcome) {
		MeterRegistry registry = this.meters;
		if (registry != null) {
			Counter.builder("kafka.resilience.operator.actions")
				.description("Operator actions through the kafkaresilience endpoint, by action and outcome")
				.tag("action", action)
				.tag("listener", listenerTag)
				.tag("outcome", outcome)
				.register(registry)
				.increment();
		}
	}

}
