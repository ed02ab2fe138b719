package io.github.kafkaresilience.internal.actuate;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.dlq.DeadLetter;
import io.github.kafkaresilience.internal.dlq.DeadLetterBrowser;
import io.github.kafkaresilience.internal.dlq.ReplayArguments;
import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.internal.ladder.LadderPlan;
import io.github.kafkaresilience.internal.listener.ListenerEndpoint;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.lock.LockRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The views of the {@code kafkaresilience} endpoint that the console pages through: held
 * keys, dead letters and one dead letter, each checked for its parameters, with the
 * response an error gets. A listing of dead letters reads at most the scan limit, and one
 * ladder at a time.
 */
public final class ConsoleViews {

	private static final Log logger = LogFactory.getLog(ConsoleViews.class);

	private final ListenerRegistry listeners;

	private final LockCoordinator locks;

	private final @Nullable DeadLetterBrowser browser;

	private final @Nullable LastErrors lastErrors;

	private final ViewSettings settings;

	private final ScanPermits scans;

	private final Clock clock;

	public ConsoleViews(ListenerRegistry listeners, LockCoordinator locks, @Nullable DeadLetterBrowser browser,
			@Nullable LastErrors lastErrors, ViewSettings settings, ScanPermits scans, Clock clock) {
		this.listeners = listeners;
		this.locks = locks;
		this.browser = browser;
		this.lastErrors = lastErrors;
		this.settings = settings;
		this.scans = scans;
		this.clock = clock;
	}

	public List<HeldKeys.HeldPage> held(@Nullable String listener, @Nullable String topic, @Nullable String key,
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

	public WebEndpointResponse<Object> deadLetters(@Nullable String listener, @Nullable String topic,
			@Nullable String since, @Nullable String until, @Nullable String reason, @Nullable String exception,
			@Nullable String errorClass, @Nullable String key, @Nullable Integer size) {
		LadderPlan plan = ladder(listener, topic);
		ReplayRequest filter = ReplayArguments.request(plan.dlqTopic(), plan.mainTopic(), plan.group(), since, until,
				errorClass, exception, reason, key, null, null, true, this.clock);
		int rows = pageSize(size, 50);
		DeadLetterBrowser browser = browser();
		try (ScanPermits.Permit permit = this.scans.take(plan.dlqTopic())) {
			if (permit == null) {
				return busy(plan.dlqTopic());
			}
			return ok(DeadLetterViews.page(required(listener, "listener"), plan.mainTopic(), plan.dlqTopic(),
					browser.browse(filter, plan.ownership(), rows, this.settings.scanLimit(), DeadLetterViews::row)));
		}
		catch (KafkaException | IllegalStateException ex) {
			return unreadable(plan.dlqTopic(), ex);
		}
	}

	/**
	 * One dead letter in full.
	 * @param showValues whether the reader is shown values (see {@link ValueDisclosure})
	 */
	public WebEndpointResponse<Object> deadLetter(@Nullable String listener, @Nullable String topic,
			@Nullable Integer partition, @Nullable Long offset, boolean showValues) {
		LadderPlan plan = ladder(listener, topic);
		DeadLetter letter;
		try {
			letter = browser().read(plan.dlqTopic(), required(partition, "partition"), required(offset, "offset"),
					plan.ownership());
		}
		catch (KafkaException | IllegalStateException ex) {
			return unreadable(plan.dlqTopic(), ex);
		}
		if (letter == null) {
			return error(404, "No dead letter of group '" + plan.group() + "' at " + plan.dlqTopic() + "/" + partition
					+ "/" + offset);
		}
		return ok(DeadLetterViews.detail(letter, this.settings.disclosure(), showValues));
	}

	/**
	 * The answer to a read of a ladder that another read is scanning: 429, to ask again
	 * shortly.
	 */
	static WebEndpointResponse<Object> busy(String dlqTopic) {
		return error(WebEndpointResponse.STATUS_TOO_MANY_REQUESTS, "Another read of '" + dlqTopic
				+ "' is under way, and one ladder is read by one request at a time; ask again in a few seconds");
	}

	/**
	 * The answer to a read that Kafka failed: a short message, the details in the server
	 * log.
	 */
	static WebEndpointResponse<Object> unreadable(String dlqTopic, RuntimeException ex) {
		logger.warn("Could not read dead-letter topic '" + dlqTopic + "' for the kafkaresilience endpoint", ex);
		return error(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE,
				"Could not read '" + dlqTopic + "'; the server log says why");
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
		if (rows < 1 || rows > this.settings.maxPageSize()) {
			throw new IllegalArgumentException("size must be between 1 and " + this.settings.maxPageSize()
					+ " (kafka.resilience.console.max-page-size), not " + rows);
		}
		return rows;
	}

	public static <T> T required(@Nullable T value, String name) {
		if (value == null || (value instanceof String text && text.isBlank())) {
			throw new IllegalArgumentException("'" + name + "' is required");
		}
		return value;
	}

	public static WebEndpointResponse<Object> ok(Object body) {
		return new WebEndpointResponse<>(body, 200);
	}

	public static WebEndpointResponse<Object> error(int status, @Nullable String message) {
		return new WebEndpointResponse<>(Map.of("status", status, "error", String.valueOf(message)), status);
	}

	/**
	 * A key as text when it is printable UTF-8, otherwise {@code base64:} and its bytes
	 * in Base64.
	 */
	public static String keyText(Bytes key) {
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

}
