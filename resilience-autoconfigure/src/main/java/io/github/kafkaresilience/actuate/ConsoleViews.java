package io.github.kafkaresilience.actuate;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.dlq.DeadLetter;
import io.github.kafkaresilience.dlq.DeadLetterBrowser;
import io.github.kafkaresilience.dlq.ReplayArguments;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.ladder.LadderPlan;
import io.github.kafkaresilience.listener.ListenerEndpoint;
import io.github.kafkaresilience.listener.OrderedRetryListenerRegistry;
import io.github.kafkaresilience.lock.LockCoordinator;
import io.github.kafkaresilience.lock.LockRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The views of the {@code kafkaresilience} endpoint that the console pages through: held keys,
 * dead letters and one dead letter, each checked for its parameters, with the response an
 * error gets.
 */
final class ConsoleViews {

	private final OrderedRetryListenerRegistry listeners;

	private final LockCoordinator locks;

	private final @Nullable DeadLetterBrowser browser;

	private final @Nullable LastErrors lastErrors;

	private final int maxPageSize;

	private final Clock clock;

	ConsoleViews(OrderedRetryListenerRegistry listeners, LockCoordinator locks, @Nullable DeadLetterBrowser browser,
			@Nullable LastErrors lastErrors, int maxPageSize, Clock clock) {
		this.listeners = listeners;
		this.locks = locks;
		this.browser = browser;
		this.lastErrors = lastErrors;
		this.maxPageSize = maxPageSize;
		this.clock = clock;
	}

	List<HeldKeys.HeldPage> held(@Nullable String listener, @Nullable String topic, @Nullable String key,
			@Nullable Integer page, @Nullable Integer size) {
		int rows = pageSize(size, 50);
		int from = (page != null) ? page : 0;
		if (from < 0) {
			throw new IllegalArgumentException("page must be 0 or more, not " + from);
		}
		Instant now = this.clock.instant();
		List<HeldKeys.HeldPage> pages = new ArrayList<>();
		for (ListenerEndpoint endpoint : this.listeners.endpoints()) {
			if (listener != null && !listener.equals(endpoint.id())) {
				continue;
			}
			for (LadderPlan plan : this.listeners.plans(endpoint.id())) {
				LockRegistry registry = this.locks.registryOf(plan.lockTopic());
				if ((topic == null || topic.equals(plan.mainTopic())) && registry != null) {
					pages.add(HeldKeys.page(endpoint.id(), plan, registry, key, from, rows, now, this.lastErrors));
				}
			}
		}
		return pages;
	}

	DeadLetterViews.DeadLetterPage deadLetters(@Nullable String listener, @Nullable String topic,
			@Nullable String since, @Nullable String until, @Nullable String reason, @Nullable String exception,
			@Nullable String errorClass, @Nullable String key, @Nullable Integer size) {
		LadderPlan plan = ladder(listener, topic);
		ReplayRequest filter = ReplayArguments.request(plan.dlqTopic(), plan.mainTopic(), plan.group(), since, until,
				errorClass, exception, reason, key, null, null, true, this.clock);
		return DeadLetterViews.page(listener, plan.mainTopic(), plan.dlqTopic(),
				browser().browse(filter, plan.ownership(), pageSize(size, 50)));
	}

	WebEndpointResponse<Object> deadLetter(@Nullable String listener, @Nullable String topic,
			@Nullable Integer partition, @Nullable Long offset) {
		LadderPlan plan = ladder(listener, topic);
		DeadLetter letter = browser().read(plan.dlqTopic(), required(partition, "partition"), required(offset, "offset"),
				plan.ownership());
		if (letter == null) {
			return error(404, "No dead letter of group '" + plan.group() + "' at " + plan.dlqTopic() + "/" + partition + "/"
					+ offset);
		}
		return ok(DeadLetterViews.detail(letter));
	}

	private LadderPlan ladder(@Nullable String listener, @Nullable String topic) {
		String id = required(listener, "listener");
		String main = required(topic, "topic");
		return this.listeners.plans(id)
			.stream()
			.filter((plan) -> plan.mainTopic().equals(main))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("No listener '" + id + "' consuming '" + main + "' here"));
	}

	private DeadLetterBrowser browser() {
		if (this.browser == null) {
			throw new IllegalArgumentException("Dead letters cannot be browsed here: no DeadLetterBrowser");
		}
		return this.browser;
	}

	private int pageSize(@Nullable Integer size, int otherwise) {
		int rows = (size != null) ? size : otherwise;
		if (rows < 1 || rows > this.maxPageSize) {
			throw new IllegalArgumentException("size must be between 1 and " + this.maxPageSize
					+ " (kafka.resilience.console.max-page-size), not " + rows);
		}
		return rows;
	}

	static <T> T required(@Nullable T value, String name) {
		if (value == null || (value instanceof String text && text.isBlank())) {
			throw new IllegalArgumentException("'" + name + "' is required");
		}
		return value;
	}

	static WebEndpointResponse<Object> ok(Object body) {
		return new WebEndpointResponse<>(body, 200);
	}

	static WebEndpointResponse<Object> error(int status, String message) {
		return new WebEndpointResponse<>(Map.of("status", status, "error", message), status);
	}

}
