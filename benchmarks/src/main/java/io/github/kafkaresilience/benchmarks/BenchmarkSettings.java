package io.github.kafkaresilience.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The sizes and options of one run of the suite. Every option has a full-size default
 * (the sizes of the benchmark definition) and a smoke default; {@code --smoke} selects
 * the smoke defaults. An option is given as {@code --name=value} or {@code --name value}
 * on the command line, or as the system property {@code bench.name}; the command line
 * wins. Counts accept {@code _} and {@code ,} as separators and the suffixes {@code k}
 * and {@code m} ({@code 1m} is 1,000,000).
 */
final class BenchmarkSettings {

	/** The scenarios, in the order they run. */
	static final List<String> SCENARIOS = List.of("P1", "P2", "P2W", "P2A", "P3", "P3L", "P3B", "P4", "P5", "P7", "P8",
			"P9", "P9R", "P10", "P10R");

	/** Options whose value is a comma-separated list, not a count with separators. */
	private static final Set<String> LISTS = Set.of("scenarios", "p2w-concurrency", "p3-delays", "p3l-delays",
			"p3b-delays", "p3b-contenders", "p7-delays", "p8-delays", "p8-contenders", "p9-instances", "p9-protocols",
			"p9r-delays", "p9r-protocols");

	private record Option(String name, String full, String smoke, String description) {
	}

	private static final List<Option> OPTIONS = List.of(
			new Option("scenarios", "P1,P2,P2W,P2A,P3,P3L,P3B,P4,P5,P7,P8,P9,P9R,P10,P10R",
					"P1,P2,P2W,P2A,P3,P3L,P3B,P4,P5,P7,P8,P9,P9R,P10,P10R", "scenarios to run, comma separated"),
			new Option("runs", "5", "1", "measured runs of each scenario; the report shows medians"),
			new Option("warmups", "1", "0",
					"unreported warm-up runs of P1, P2, P2W, P2A, P3, P3L, P3B and P7 before the measured ones"),
			new Option("timeout-seconds", "900", "60",
					"how long one contender may take in one run before it is reported incomplete"),
			new Option("output", "target/benchmark-results.md", "target/smoke-results.md",
					"where the Markdown report is written"),
			new Option("command", "", "", "the command line to print in the report"),
			new Option("value-bytes", "100", "100", "size of every record value"),
			new Option("concurrency", "4", "4",
					"worker threads of @OrderedRetryListener in P1, P3, P3L, P3B, P4, P5 and P8 (the library default); consumers of each @RetryableTopic container in P3L and P3B, and of the blocking @KafkaListener in P8"),
			new Option("p1-records", "10m", "3000", "P1: records"),
			new Option("p1-partitions", "6", "6", "P1: partitions"),
			new Option("p1-keys", "10k", "100", "P1: distinct keys"),
			new Option("p1-listener-consumers", "1", "1", "P1: consumers (concurrency) of the plain @KafkaListener"),
			new Option("p1-windows", "10", "3",
					"P1: back-to-back windows of equal record counts in a pass; a pass reports the median window"),
			new Option("p1-passes", "3", "1",
					"P1: passes of every contender over the topic in one run, interleaved; a run reports each contender's median pass"),
			new Option("p2-records", "16000", "320", "P2: records"),
			new Option("p2-keys", "1000", "100", "P2: distinct keys"),
			new Option("p2-sleep-ms", "10", "10", "P2: how long the handler sleeps"),
			new Option("p2-workers", "16", "16", "P2: worker threads of @OrderedRetryListener and Parallel Consumer"),
			new Option("p2-plain-records", "1000", "40",
					"P2: how many of the records the plain @KafkaListener handles (it runs one at a time)"),
			new Option("p2w-records", "100k", "2000", "P2W: records"),
			new Option("p2w-keys", "10k", "500", "P2W: distinct keys"),
			new Option("p2w-handler-ms", "10", "10", "P2W: how long the handler sleeps"),
			new Option("p2w-concurrency", "256,2000", "16,64",
					"P2W: concurrencies, comma separated; the library runs on platform threads at the first, on virtual threads (Java 21+) at each"),
			new Option("p2a-records", "100k", "2000", "P2A: records"),
			new Option("p2a-keys", "10k", "500", "P2A: distinct keys"),
			new Option("p2a-wait-ms", "10", "10", "P2A: how long after the call each record's result completes"),
			new Option("p2a-in-flight", "2000", "200",
					"P2A: records in flight: the library's max-in-flight-per-partition, its virtual threads, Parallel Consumer's maxConcurrency, the plain listener's max.poll.records"),
			new Option("p2a-concurrency", "4", "4",
					"P2A: workers of the library's listeners whose results complete later"),
			new Option("p3-records", "100k", "1000", "P3: records"),
			new Option("p3-failing", "10k", "50", "P3: records that fail transiently once (each on a key of its own)"),
			new Option("p3-partitions", "6", "6", "P3: partitions"),
			new Option("p3-keys", "10k", "100", "P3: distinct keys of the healthy records"),
			new Option("p3-delays", "1s", "1s", "P3: retry stage delays"),
			new Option("p3-handler-ms", "0", "0", "P3: how long the handler sleeps on every attempt (0: no-op)"),
			new Option("p3-retryable-records", "10k", "1000",
					"P3: records of the @RetryableTopic contender (the same share fails)"),
			new Option("p3l-rate", "5000", "250", "P3L: records sent per second while the contender runs"),
			new Option("p3l-records", "100k", "500", "P3L: records measured (sent over records / rate seconds)"),
			new Option("p3l-settle-seconds", "3", "1",
					"P3L: seconds of sending before latencies count (the instance creates its producers)"),
			new Option("p3l-fail-every", "10", "10",
					"P3L: one record in n fails once in the storm, on a key of its own"),
			new Option("p3l-partitions", "6", "6", "P3L: partitions"),
			new Option("p3l-keys", "10k", "100", "P3L: distinct keys of the healthy records"),
			new Option("p3l-delays", "1s", "1s", "P3L: retry stage delays (of @RetryableTopic too)"),
			new Option("p3l-handler-ms", "0", "0", "P3L: how long the handler sleeps on every attempt (0: no-op)"),
			new Option("p3b-failing-keys", "1000", "50",
					"P3B: keys that each send one record of the burst that fails once"),
			new Option("p3b-clean-keys", "8", "2", "P3B: keys that never fail, interleaved with the failing ones"),
			new Option("p3b-clean-records", "200", "20", "P3B: records of the burst on each clean key"),
			new Option("p3b-burst-ms", "250", "250", "P3B: how long the burst is sent for, its records evenly spread"),
			new Option("p3b-partitions", "4", "4", "P3B: partitions"),
			new Option("p3b-delays", "2s,4s,6s", "2s,4s,6s", "P3B: retry stage delays (of @RetryableTopic too)"),
			new Option("p3b-contenders", "compensate,transaction,retryable,calm",
					"compensate,transaction,retryable,calm",
					"P3B: the contenders to run; one alone, with --warmups=0, takes the burst in a JVM that never took one"),
			new Option("p4-locks", "1m", "5000", "P4: live locks in the lock topic"),
			new Option("p4-partitions", "6", "6", "P4: partitions"),
			new Option("p5-rate", "5000", "200", "P5: records sent per second"),
			new Option("p5-seconds", "30", "2", "P5: how long records are sent"),
			new Option("p5-fail-every", "50", "10",
					"P5: one record in n fails twice (1 s stage, then 5 s stage), on a key of its own"),
			new Option("p5-partitions", "6", "6", "P5: partitions"),
			new Option("p5-keys", "1000", "100", "P5: distinct keys of the healthy records"),
			new Option("p7-records", "1m", "1200", "P7: records"),
			new Option("p7-failing", "10k", "12",
					"P7: records that fail once, on their first attempt, when the contender runs with failures (each on a key of its own)"),
			new Option("p7-partitions", "6", "6", "P7: partitions"),
			new Option("p7-keys", "10k", "100", "P7: distinct keys of the records that never fail"),
			new Option("p7-concurrency", "6", "6",
					"P7: consumers of the plain batch @KafkaListener and workers of the batch @OrderedRetryListener: calls that can run at once"),
			new Option("p7-call-ms", "5", "5",
					"P7: what one call of the batch method costs (parked, not spinning), before its records"),
			new Option("p7-record-micros", "10", "10", "P7: what each record of a call adds to its cost"),
			new Option("p7-delays", "1s", "1s", "P7: retry stage delays of @OrderedRetryListener"),
			new Option("p8-rate", "2000", "200", "P8: records sent per second while the contender runs"),
			new Option("p8-seconds", "20", "4", "P8: how long records are sent"),
			new Option("p8-outage-start-seconds", "3", "1", "P8: seconds of sending before the outage starts"),
			new Option("p8-outage-seconds", "10", "2", "P8: how long every call of the handler fails"),
			new Option("p8-partitions", "4", "4", "P8: partitions"),
			new Option("p8-keys", "40", "40", "P8: distinct keys, taken in turn"),
			new Option("p8-delays", "2s,4s,6s", "2s,4s,6s", "P8: retry stage delays of @OrderedRetryListener"),
			new Option("p8-contenders", "defaults,no-ramp,backing-off,blocking", "defaults,blocking",
					"P8: contenders, of defaults, no-ramp, backing-off and blocking"),
			new Option("p9-records", "24000", "240", "P9: records of each run"),
			new Option("p9-keys", "1000", "100", "P9: distinct keys"),
			new Option("p9-partitions", "4", "4", "P9: partitions"),
			new Option("p9-sleep-ms", "10", "10", "P9: how long the handler sleeps"),
			new Option("p9-workers", "16", "16", "P9: worker threads of each instance"),
			new Option("p9-instances", "1,2,4", "1,2",
					"P9: instances of the group in a run, comma separated; the first is the baseline"),
			new Option("p9-protocols", "classic,consumer", "classic,consumer", "P9: group protocols, comma separated"),
			new Option("p9r-instances", "3", "2", "P9R: instances of the group, restarted one after the other"),
			new Option("p9r-partitions", "4", "4", "P9R: partitions (at least one an instance)"),
			new Option("p9r-rate", "2000", "200", "P9R: records sent per second, before, during and after the roll"),
			new Option("p9r-keys", "1000", "100", "P9R: distinct keys, taken in turn"),
			new Option("p9r-steady-seconds", "10", "2", "P9R: seconds of sending before the roll"),
			new Option("p9r-after-seconds", "5", "1", "P9R: seconds of sending after the roll"),
			new Option("p9r-flaky-every", "50", "10",
					"P9R: one key in n is flaky (0: none); the other keys never fail and are measured"),
			new Option("p9r-fail-every", "10", "5",
					"P9R: one record in n of a flaky key fails once, on its first call"),
			new Option("p9r-delays", "1s,2s", "1s,2s", "P9R: retry stage delays of @OrderedRetryListener"),
			new Option("p9r-plain-consumers", "1", "1",
					"P9R: consumers (concurrency) of each instance's plain @KafkaListener"),
			new Option("p9r-plain-back-off-ms", "50", "50",
					"P9R: the plain listener's DefaultErrorHandler pause before it tries a failed record again"),
			new Option("p9r-protocols", "classic,consumer", "classic", "P9R: group protocols, comma separated"),
			new Option("p10-flood-records", "200k", "2000",
					"P10: records tenant A writes at once in its flood, and again alone"),
			new Option("p10-flood-keys", "10k", "200", "P10: distinct keys of tenant A"),
			new Option("p10-tenant-rate", "50", "50", "P10: records sent per second by each of tenants B to E"),
			new Option("p10-tenant-keys", "10", "10", "P10: distinct keys of each of tenants B to E"),
			new Option("p10-handler-ms", "2", "2", "P10: how long the handler sleeps"),
			new Option("p10-workers", "16", "16",
					"P10: worker threads of @OrderedRetryListener, maxConcurrency of Parallel Consumer"),
			new Option("p10-partitions", "4", "4", "P10: partitions"),
			new Option("p10-settle-seconds", "3", "1",
					"P10: seconds of sending by B to E, once the first of their records is handled, before latencies count"),
			new Option("p10-calm-seconds", "10", "1", "P10: seconds B to E are measured with no flood"),
			new Option("p10r-records", "20k", "1000", "P10R: records, written before the contenders start"),
			new Option("p10r-rate", "500", "500", "P10R: the rate limit, records per second"),
			new Option("p10r-period-ms", "100", "100",
					"P10R: limitRefreshPeriod of the Resilience4j RateLimiter, which lets rate × period through in each"),
			new Option("p10r-workers", "16", "16", "P10R: worker threads of both contenders"),
			new Option("p10r-handler-ms", "2", "2", "P10R: how long the handler sleeps"),
			new Option("p10r-partitions", "4", "4", "P10R: partitions"),
			new Option("p10r-keys", "1000", "100", "P10R: distinct keys"));

	private final Map<String, String> values;

	private final boolean smoke;

	private final boolean help;

	private BenchmarkSettings(Map<String, String> values, boolean smoke, boolean help) {
		this.values = values;
		this.smoke = smoke;
		this.help = help;
	}

	/**
	 * Reads the settings from command-line arguments and {@code bench.*} system
	 * properties.
	 * @param args the arguments
	 * @return the settings
	 * @throws IllegalArgumentException for an unknown option or an unreadable value
	 */
	static BenchmarkSettings parse(String... args) {
		Map<String, String> given = new LinkedHashMap<>();
		for (Option option : OPTIONS) {
			String property = System.getProperty("bench." + option.name());
			if (property != null) {
				given.put(option.name(), property);
			}
		}
		boolean smoke = Boolean.getBoolean("bench.smoke");
		boolean help = false;
		for (int i = 0; i < args.length; i++) {
			String arg = args[i];
			if (!arg.startsWith("--")) {
				throw new IllegalArgumentException("Unexpected argument '" + arg + "'; options start with --");
			}
			String name = arg.substring(2);
			String value = null;
			int equals = name.indexOf('=');
			if (equals >= 0) {
				value = name.substring(equals + 1);
				name = name.substring(0, equals);
			}
			if (name.equals("smoke")) {
				smoke = true;
				continue;
			}
			if (name.equals("help")) {
				help = true;
				continue;
			}
			if (find(name) == null) {
				throw new IllegalArgumentException("Unknown option '--" + name + "'; --help lists the options");
			}
			if (value == null) {
				if (i + 1 >= args.length) {
					throw new IllegalArgumentException("Option '--" + name + "' needs a value");
				}
				value = args[++i];
			}
			given.put(name, value);
		}
		Map<String, String> values = new LinkedHashMap<>();
		for (Option option : OPTIONS) {
			values.put(option.name(), given.getOrDefault(option.name(), smoke ? option.smoke() : option.full()));
		}
		BenchmarkSettings settings = new BenchmarkSettings(values, smoke, help);
		settings.validate();
		return settings;
	}

	/** The options and their defaults, for {@code --help}. */
	static String usage() {
		StringBuilder usage = new StringBuilder();
		usage.append("Options (--name=value; defaults: full size, then --smoke):\n");
		usage.append(String.format("  %-24s %s%n", "--smoke",
				"tiny sizes, one run: checks that everything works, measures nothing"));
		for (Option option : OPTIONS) {
			usage.append(String.format("  %-24s %s [%s | %s]%n", "--" + option.name(), option.description(),
					option.full().isEmpty() ? "-" : option.full(), option.smoke().isEmpty() ? "-" : option.smoke()));
		}
		return usage.toString();
	}

	boolean smoke() {
		return this.smoke;
	}

	boolean help() {
		return this.help;
	}

	Set<String> scenarios() {
		Set<String> scenarios = new LinkedHashSet<>();
		for (String name : text("scenarios").split(",")) {
			String scenario = name.trim().toUpperCase(Locale.ROOT);
			if (!scenario.isEmpty()) {
				scenarios.add(scenario);
			}
		}
		return scenarios;
	}

	int runs() {
		return count("runs");
	}

	int warmups() {
		return count("warmups");
	}

	Duration timeout() {
		return Duration.ofSeconds(count("timeout-seconds"));
	}

	Path output() {
		return Path.of(text("output"));
	}

	String command() {
		return text("command");
	}

	/** An option's value as text. */
	String text(String name) {
		String value = this.values.get(name);
		if (value == null) {
			throw new IllegalArgumentException("Unknown option '" + name + "'");
		}
		return value;
	}

	/**
	 * A list option's values, each a count as {@link #count(String)} reads it, but with
	 * {@code ,} separating the values rather than digits.
	 */
	List<Integer> counts(String name) {
		List<Integer> counts = new ArrayList<>();
		for (String part : text(name).split(",")) {
			if (!part.isBlank()) {
				counts.add(parseCount(name, part));
			}
		}
		if (counts.isEmpty()) {
			throw new IllegalArgumentException("Option '--" + name + "' needs at least one value");
		}
		return counts;
	}

	/**
	 * A count option's value: digits with optional separators and a {@code k} or
	 * {@code m} suffix.
	 */
	int count(String name) {
		return parseCount(name, text(name));
	}

	private static int parseCount(String name, String given) {
		String text = given.trim().replace("_", "").replace(",", "").toLowerCase(Locale.ROOT);
		long factor = 1;
		if (text.endsWith("k")) {
			factor = 1_000;
			text = text.substring(0, text.length() - 1);
		}
		else if (text.endsWith("m")) {
			factor = 1_000_000;
			text = text.substring(0, text.length() - 1);
		}
		try {
			long value = Long.parseLong(text) * factor;
			if (value < 0 || value > Integer.MAX_VALUE) {
				throw new IllegalArgumentException("Option '--" + name + "' is out of range: " + given);
			}
			return (int) value;
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("Option '--" + name + "' is not a count: " + given, ex);
		}
	}

	/** The options that differ from their full-size defaults, for the report. */
	List<String> changedSizes() {
		List<String> changed = new ArrayList<>();
		for (Option option : OPTIONS) {
			if (option.name().equals("output") || option.name().equals("command")) {
				continue;
			}
			if (!option.full().equals(this.values.get(option.name()))) {
				changed.add("--" + option.name() + "=" + this.values.get(option.name()));
			}
		}
		return changed;
	}

	private void validate() {
		for (String scenario : scenarios()) {
			if (!SCENARIOS.contains(scenario)) {
				throw new IllegalArgumentException("Unknown scenario '" + scenario + "'; choose from " + SCENARIOS);
			}
		}
		for (Option option : OPTIONS) {
			String full = option.full();
			if (!full.isEmpty() && Character.isDigit(full.charAt(0)) && !LISTS.contains(option.name())) {
				count(option.name());
			}
		}
		if (runs() < 1) {
			throw new IllegalArgumentException("--runs must be at least 1");
		}
		if (count("p3-failing") > count("p3-records")) {
			throw new IllegalArgumentException("--p3-failing cannot exceed --p3-records");
		}
		if (count("p3-retryable-records") < 1 || count("p3-retryable-records") > count("p3-records")) {
			throw new IllegalArgumentException("--p3-retryable-records must be at least 1 and at most --p3-records");
		}
		if (count("p2w-records") < 1 || count("p2w-keys") < 1 || count("p2w-handler-ms") < 1) {
			throw new IllegalArgumentException("--p2w-records, --p2w-keys and --p2w-handler-ms must be at least 1");
		}
		if (counts("p2w-concurrency").stream().anyMatch((concurrency) -> concurrency < 1)) {
			throw new IllegalArgumentException("every --p2w-concurrency must be at least 1");
		}
		if (count("p2-plain-records") > count("p2-records")) {
			throw new IllegalArgumentException("--p2-plain-records cannot exceed --p2-records");
		}
		if (count("p1-windows") < 1 || count("p1-windows") > count("p1-records")) {
			throw new IllegalArgumentException("--p1-windows must be at least 1 and at most --p1-records");
		}
		if (count("p1-passes") < 1) {
			throw new IllegalArgumentException("--p1-passes must be at least 1");
		}
		if (count("p3l-rate") < 1) {
			throw new IllegalArgumentException("--p3l-rate must be at least 1");
		}
		if (count("p3l-fail-every") < 2) {
			throw new IllegalArgumentException("--p3l-fail-every must be at least 2, or no key is healthy");
		}
		if (count("p3b-clean-keys") < 1 || count("p3b-clean-records") < 1) {
			throw new IllegalArgumentException("--p3b-clean-keys and --p3b-clean-records must be at least 1");
		}
		if ((long) count("p3b-clean-keys") * count("p3b-clean-records")
				+ count("p3b-failing-keys") > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("P3B's burst cannot hold more than " + Integer.MAX_VALUE + " records");
		}
		if (count("p3b-partitions") < 1) {
			throw new IllegalArgumentException("--p3b-partitions must be at least 1");
		}
		List<String> known = List.of("compensate", "transaction", "retryable", "calm");
		for (String contender : text("p3b-contenders").split(",")) {
			if (!known.contains(contender.trim())) {
				throw new IllegalArgumentException("Option '--p3b-contenders' names '" + contender.trim()
						+ "'; the contenders are " + String.join(", ", known));
			}
		}
		for (String contender : text("p8-contenders").split(",")) {
			if (!OutageScenario.SLUGS.contains(contender.trim())) {
				throw new IllegalArgumentException("Option '--p8-contenders' names '" + contender.trim()
						+ "'; the contenders are " + String.join(", ", OutageScenario.SLUGS));
			}
		}
		for (String delays : List.of("p3l-delays", "p3b-delays", "p7-delays", "p8-delays", "p9r-delays")) {
			try {
				Scenario.delays(text(delays));
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException(
						"Option '--" + delays + "' is not a list of durations: " + text(delays), ex);
			}
		}
		if (count("p5-fail-every") < 1) {
			throw new IllegalArgumentException("--p5-fail-every must be at least 1");
		}
		if (count("p7-records") < 2 || count("p7-partitions") < 1 || count("p7-keys") < 1
				|| count("p7-concurrency") < 1) {
			throw new IllegalArgumentException("--p7-records must be at least 2, and --p7-partitions, --p7-keys and "
					+ "--p7-concurrency at least 1");
		}
		if (count("p7-failing") >= count("p7-records")) {
			throw new IllegalArgumentException("--p7-failing must be less than --p7-records");
		}
		if (count("p8-rate") < 1 || count("p8-outage-seconds") < 1 || count("p8-keys") < 1
				|| count("p8-partitions") < 1) {
			throw new IllegalArgumentException(
					"--p8-rate, --p8-outage-seconds, --p8-keys and --p8-partitions must be " + "at least 1");
		}
		if ((long) count("p8-outage-start-seconds") + count("p8-outage-seconds") > count("p8-seconds")) {
			throw new IllegalArgumentException("P8's outage must end by the end of sending: --p8-outage-start-seconds "
					+ "plus --p8-outage-seconds cannot exceed --p8-seconds");
		}
		if ((long) count("p8-rate") * count("p8-seconds") > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("P8 cannot send more than " + Integer.MAX_VALUE + " records");
		}
		if (count("p9r-instances") < 1 || count("p9r-partitions") < count("p9r-instances")) {
			throw new IllegalArgumentException("--p9r-instances must be at least 1, and --p9r-partitions at least "
					+ "--p9r-instances: every instance must hold a partition");
		}
		if (count("p9r-rate") < 1 || count("p9r-keys") < 1 || count("p9r-fail-every") < 1
				|| count("p9r-plain-consumers") < 1) {
			throw new IllegalArgumentException(
					"--p9r-rate, --p9r-keys, --p9r-fail-every and --p9r-plain-consumers " + "must be at least 1");
		}
		if (count("p9r-flaky-every") == 1) {
			throw new IllegalArgumentException(
					"--p9r-flaky-every must be 0 (no flaky key) or at least 2, or no key " + "is measured");
		}
		for (String option : List.of("p10-flood-records", "p10-flood-keys", "p10-tenant-rate", "p10-tenant-keys",
				"p10-workers", "p10-partitions", "p10r-records", "p10r-rate", "p10r-period-ms", "p10r-workers",
				"p10r-partitions", "p10r-keys")) {
			if (count(option) < 1) {
				throw new IllegalArgumentException("--" + option + " must be at least 1");
			}
		}
		if (count("p10-flood-records") < 2 || count("p10r-records") < 2) {
			throw new IllegalArgumentException("--p10-flood-records and --p10r-records must be at least 2");
		}
		if ((long) count("p10r-rate") * count("p10r-period-ms") < 1000) {
			throw new IllegalArgumentException("--p10r-rate × --p10r-period-ms must let at least one record through "
					+ "in a period (at least 1000)");
		}
		for (String protocol : text("p9r-protocols").split(",")) {
			if (!List.of("classic", "consumer").contains(protocol.trim())) {
				throw new IllegalArgumentException("Option '--p9r-protocols' names '" + protocol.trim()
						+ "'; the group protocols are classic and consumer");
			}
		}
	}

	private static Option find(String name) {
		return OPTIONS.stream().filter((option) -> option.name().equals(name)).findFirst().orElse(null);
	}

}
