package io.github.kafkaresilience.internal.dlq;

import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.kafkaresilience.dlq.ReplayRequest;
import io.github.kafkaresilience.ladder.DlqReason;
import io.github.kafkaresilience.internal.ladder.ProtocolHeaders;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * Reads a replay request from text: the arguments of the {@code replay} command line and
 * the fields of the endpoint's replay operation.
 * <p>
 * A time ({@code since}, {@code until}) is either a duration before now ({@code 90s},
 * {@code 30m}, {@code 1h}, {@code 2d}, {@code PT1H}) or an instant in RFC 3339
 * ({@code 2026-11-21T09:00:00Z}).
 *
 * @since 0.1.0
 */
public final class ReplayArguments {

	/** How to call the command, for error messages and {@code --help}. */
	public static final String USAGE = """
			Usage: java -jar <app>.jar replay --from <dlq topic> --to <topic> [--group <group>] [filters] [--dry-run]
			  --from <topic>               the dead-letter topic to read
			  --to <topic>                 the main topic whose ladder the dead letters go back to
			  --group <group>              the consumer group whose ladder it is (needed when several listeners here consume <topic>)
			  --since <time>               only dead letters written at or after <time>: 1h (ago), 30m, 2d or 2026-11-21T09:00:00Z
			  --until <time>               only dead letters written before <time>
			  --error-class <class>        transient or permanent (header error.class)
			  --exception <class name>     the exception of the last failure (header error.exception)
			  --reason <reason>            permanent, exhausted, poison or operator (header dlq.reason)
			  --key <key>                  the record key, as UTF-8 text
			  --original-partition <n>     the partition the record was born in
			  --original-offset <n>        the offset the record was born at
			  --dry-run                    count the matching dead letters, send nothing
			Spring properties (--spring.kafka.bootstrap-servers=..., --kafka.resilience.replay.rate=...) may follow.""";

	private static final List<String> VALUED = List.of("from", "to", "group", "since", "until", "error-class",
			"exception", "reason", "key", "original-partition", "original-offset");

	private static final String DRY_RUN = "dry-run";

	private static final List<String> ERROR_CLASSES = List.of(ProtocolHeaders.TRANSIENT, ProtocolHeaders.PERMANENT);

	private static final List<String> REASONS = Arrays.stream(DlqReason.values()).map(DlqReason::value).toList();

	private ReplayArguments() {
	}

	/**
	 * Reads the arguments that follow {@code replay} on the command line. Both
	 * {@code --name value} and {@code --name=value} work. Arguments naming a property
	 * ({@code --spring.kafka.bootstrap-servers=...}) are left to Spring Boot.
	 * @throws IllegalArgumentException for an unknown option, a missing value or a bad
	 * one
	 */
	public static ReplayRequest parse(List<String> args, Clock clock) {
		Map<String, String> values = new LinkedHashMap<>();
		boolean dryRun = false;
		for (int i = 0; i < args.size(); i++) {
			String arg = args.get(i);
			if (!arg.startsWith("--")) {
				throw new IllegalArgumentException("Unexpected argument '" + arg + "'\n" + USAGE);
			}
			String name = arg.substring(2);
			String value = null;
			int equals = name.indexOf('=');
			if (equals >= 0) {
				value = name.substring(equals + 1);
				name = name.substring(0, equals);
			}
			if (name.equals(DRY_RUN)) {
				dryRun = (value == null) || Boolean.parseBoolean(value);
			}
			else if (VALUED.contains(name)) {
				if (value == null) {
					if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
						throw new IllegalArgumentException("--" + name + " needs a value\n" + USAGE);
					}
					value = args.get(++i);
				}
				values.put(name, value);
			}
			else if (!name.contains(".")) {
				throw new IllegalArgumentException("Unknown option --" + name + "\n" + USAGE);
			}
		}
		String from = values.get("from");
		String to = values.get("to");
		if (from == null || to == null) {
			throw new IllegalArgumentException("A replay needs --from and --to\n" + USAGE);
		}
		return request(from, to, values.get("group"), values.get("since"), values.get("until"),
				values.get("error-class"), values.get("exception"), values.get("reason"), values.get("key"),
				values.get("original-partition"), values.get("original-offset"), dryRun, clock);
	}

	/**
	 * Builds a request from text fields, any of them but {@code from} and {@code to}
	 * absent.
	 * @throws IllegalArgumentException for a value that cannot be read
	 */
	public static ReplayRequest request(String from, String to, @Nullable String group, @Nullable String since,
			@Nullable String until, @Nullable String errorClass, @Nullable String exception, @Nullable String reason,
			@Nullable String key, @Nullable String originalPartition, @Nullable String originalOffset, boolean dryRun,
			Clock clock) {
		return new ReplayRequest(from, to, (group != null) ? group.trim() : null, time("since", since, clock),
				time("until", until, clock), oneOf("error-class", errorClass, ERROR_CLASSES), exception,
				oneOf("reason", reason, REASONS), key,
				number("original-partition", originalPartition, Integer.MAX_VALUE).map(Long::intValue).orElse(null),
				number("original-offset", originalOffset, Long.MAX_VALUE).orElse(null), dryRun);
	}

	/** Reads a time: a duration before now, or an RFC 3339 instant. */
	public static @Nullable Instant time(String name, @Nullable String text, Clock clock) {
		if (text == null || text.isBlank()) {
			return null;
		}
		String trimmed = text.trim();
		Duration ago;
		try {
			ago = DurationStyle.detectAndParse(trimmed);
		}
		catch (IllegalArgumentException ex) {
			try {
				return OffsetDateTime.parse(trimmed).toInstant();
			}
			catch (DateTimeException notTime) {
				throw new IllegalArgumentException("--" + name + " '" + text
						+ "' is neither a duration before now (1h, 30m, PT1H) nor an instant (2026-11-21T09:00:00Z)");
			}
		}
		if (ago.isNegative()) {
			throw new IllegalArgumentException("--" + name + " '" + text + "' is a negative duration");
		}
		return clock.instant().minus(ago);
	}

	private static @Nullable String oneOf(String name, @Nullable String text, List<String> allowed) {
		if (text == null || text.isBlank()) {
			return null;
		}
		String value = text.trim();
		if (!allowed.contains(value)) {
			throw new IllegalArgumentException("--" + name + " '" + text + "' is not one of " + allowed);
		}
		return value;
	}

	private static Optional<Long> number(String name, @Nullable String text, long max) {
		if (text == null || text.isBlank()) {
			return Optional.empty();
		}
		try {
			long value = Long.parseLong(text.trim());
			if (value < 0 || value > max) {
				throw new NumberFormatException();
			}
			return Optional.of(value);
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("--" + name + " '" + text + "' is not a partition or offset number");
		}
	}

}
