package io.github.kafkaresilience.internal.actuate;

import java.time.Clock;
import java.util.List;
import java.util.function.Supplier;

import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.internal.dlq.ReplayArguments;
import io.github.kafkaresilience.dlq.ReplayReport;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.KafkaException;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * A replay asked over the endpoint. It goes back into the ladder of its dead-letter topic
 * only (other targets are the {@code replay} command's). A dry run sends nothing: it is a
 * read, bounded as a listing of dead letters is (the scan limit, one read of a ladder at
 * a time). A replay that sends is an action: it needs what the other actions need
 * ({@link OperatorActions}) and is audited with who asked, the filter and how many were
 * sent.
 */
public final class WebReplays {

	static final String ACTION = "replay";

	private static final Log logger = LogFactory.getLog(WebReplays.class);

	private final ListenerRegistry listeners;

	private final Supplier<DlqReplayer> replayer;

	private final OperatorActions actions;

	private final ScanPermits scans;

	private final long scanLimit;

	private final Clock clock;

	public WebReplays(ListenerRegistry listeners, Supplier<DlqReplayer> replayer, OperatorActions actions,
			ScanPermits scans, long scanLimit, Clock clock) {
		this.listeners = listeners;
		this.replayer = replayer;
		this.actions = actions;
		this.scans = scans;
		this.scanLimit = scanLimit;
		this.clock = clock;
	}

	/**
	 * Runs a replay of the dead letters of {@code from} that match the filters: a dry run
	 * unless {@code dryRun} is {@code false}.
	 * @throws OperatorActions.Refused when a replay that sends is not allowed, or its
	 * request is not one this application can run
	 * @throws IllegalArgumentException when a dry run's request is not one this
	 * application can run
	 */
	public WebEndpointResponse<Object> replay(SecurityContext security, @Nullable String from, @Nullable String to,
			@Nullable String group, @Nullable String since, @Nullable String until, @Nullable String errorClass,
			@Nullable String exception, @Nullable String reason, @Nullable String key,
			@Nullable String originalPartition, @Nullable String originalOffset, @Nullable Boolean dryRun) {
		Source source = source(from);
		if (!Boolean.FALSE.equals(dryRun)) {
			ReplayRequest request = request(source, from, to, group, since, until, errorClass, exception, reason, key,
					originalPartition, originalOffset, true);
			try (ScanPermits.Permit permit = this.scans.take(request.from())) {
				if (permit == null) {
					return ConsoleViews.busy(request.from());
				}
				return ConsoleViews.ok(this.replayer.get().replay(request, this.scanLimit));
			}
			catch (KafkaException | IllegalStateException ex) {
				return ConsoleViews.unreadable(request.from(), ex);
			}
		}
		String tag = (source != null) ? source.listener() : OperatorAudit.UNKNOWN;
		String subject = "dead letters of '" + ((source != null) ? source.plan().dlqTopic() : OperatorAudit.shown(from))
				+ "'";
		String by = this.actions.authorize(security, ACTION, tag, subject);
		ReplayRequest request;
		try {
			request = request(source, from, to, group, since, until, errorClass, exception, reason, key,
					originalPartition, originalOffset, false);
		}
		catch (IllegalArgumentException ex) {
			throw this.actions.audit().refused(400, ACTION, tag, by, subject, ex.getMessage());
		}
		ReplayReport report;
		try {
			report = this.replayer.get().replay(request);
		}
		catch (IllegalArgumentException ex) {
			throw this.actions.audit().refused(400, ACTION, tag, by, subject, ex.getMessage());
		}
		catch (KafkaException | IllegalStateException ex) {
			logger.warn("Replay " + request + " asked by '" + OperatorAudit.shown(by) + "' failed", ex);
			this.actions.audit()
				.failed(ACTION, tag, "Operator '" + OperatorAudit.shown(by) + "' asked replay " + request
						+ ", which failed: " + ex.getMessage());
			return ConsoleViews.error(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE, "The replay of '" + request.from()
					+ "' failed; the server log says why and how many dead letters it sent first");
		}
		this.actions.audit()
			.accepted(ACTION, tag, "Operator '" + OperatorAudit.shown(by) + "' replayed " + request + ": matched "
					+ report.matched() + ", sent " + report.published() + " into '" + report.target() + "'");
		return ConsoleViews.ok(report);
	}

	/**
	 * The request, into the ladder of {@code from} only.
	 * @throws IllegalArgumentException when {@code from} is no dead-letter topic here,
	 * another target is named, or a filter cannot be read
	 */
	private ReplayRequest request(@Nullable Source source, @Nullable String from, @Nullable String to,
			@Nullable String group, @Nullable String since, @Nullable String until, @Nullable String errorClass,
			@Nullable String exception, @Nullable String reason, @Nullable String key,
			@Nullable String originalPartition, @Nullable String originalOffset, boolean dryRun) {
		if (source == null) {
			throw new IllegalArgumentException("'from' must be the dead-letter topic of a listener here; known: "
					+ plans().stream().map(LadderPlan::dlqTopic).toList());
		}
		LadderPlan plan = source.plan();
		if ((to != null && !to.isBlank() && !to.trim().equals(plan.mainTopic()))
				|| (group != null && !group.isBlank() && !group.trim().equals(plan.group()))) {
			throw new IllegalArgumentException("Over the web a replay goes back into the ladder of its dead-letter "
					+ "topic only: '" + plan.mainTopic() + "' in group '" + plan.group()
					+ "'; replay into another with the replay command");
		}
		return ReplayArguments.request(plan.dlqTopic(), plan.mainTopic(), plan.group(), since, until, errorClass,
				exception, reason, key, originalPartition, originalOffset, dryRun, this.clock);
	}

	/**
	 * The listener and ladder whose dead-letter topic is {@code from}, or {@code null}.
	 */
	private @Nullable Source source(@Nullable String from) {
		for (ListenerEndpoint endpoint : this.listeners.endpoints()) {
			for (LadderPlan plan : this.listeners.plans(endpoint.id())) {
				if (plan.dlqTopic().equals(from)) {
					return new Source(endpoint.id(), plan);
				}
			}
		}
		return null;
	}

	private List<LadderPlan> plans() {
		return this.listeners.endpoints()
			.stream()
			.flatMap((endpoint) -> this.listeners.plans(endpoint.id()).stream())
			.toList();
	}

	/** A dead-letter topic of this application: its listener and ladder. */
	private record Source(String listener, LadderPlan plan) {
	}

}
