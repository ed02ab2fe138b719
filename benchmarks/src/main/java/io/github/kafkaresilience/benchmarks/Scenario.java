package io.github.kafkaresilience.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import com.sun.management.OperatingSystemMXBean;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * One scenario of the suite: it creates its topics on the shared broker, runs each of its
 * contenders the configured number of times and reports medians.
 */
abstract class Scenario {

	/** The report label of the library's listener, the same in every scenario. */
	static final String ORDERED = "@OrderedRetryListener";

	/** The report label of a plain Spring Kafka listener, the same in every scenario. */
	static final String PLAIN = "@KafkaListener";

	/**
	 * The report label of a plain Spring Kafka listener with Spring Kafka's non-blocking
	 * retries, the same in every scenario.
	 */
	static final String RETRYABLE = "@RetryableTopic";

	protected final Log logger = LogFactory.getLog(getClass());

	protected final BenchmarkBroker broker;

	protected final BenchmarkSettings settings;

	Scenario(BenchmarkBroker broker, BenchmarkSettings settings) {
		this.broker = broker;
		this.settings = settings;
	}

	/** Runs the scenario: every run of every contender. */
	abstract ScenarioReport run() throws Exception;

	/**
	 * The runs of a scenario in order: warm-ups (numbered up to 0, not reported) when
	 * {@code warmUp}, then the measured runs numbered from 1.
	 */
	protected List<Integer> runs(boolean warmUp) {
		List<Integer> runs = new ArrayList<>();
		if (warmUp) {
			for (int i = 1 - this.settings.warmups(); i <= 0; i++) {
				runs.add(i);
			}
		}
		for (int i = 1; i <= this.settings.runs(); i++) {
			runs.add(i);
		}
		return runs;
	}

	/**
	 * The CPU time this process (the broker and every client included) has used so far,
	 * in nanoseconds, or -1 where the JVM does not tell.
	 */
	protected static long processCpuNanos() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
			return os.getProcessCpuTime();
		}
		return -1;
	}

	/**
	 * A run's label in topic, group and instance names: {@code w0} for a warm-up,
	 * {@code r1} for a run.
	 */
	protected static String label(int run) {
		return (run > 0) ? "r" + run : "w" + (-run);
	}

	/**
	 * The contenders in the order one run measures them: each run starts with the next
	 * one, so that no contender is always first (cold) or last.
	 */
	protected static <T> List<T> rotated(List<T> contenders, int run) {
		List<T> rotated = new ArrayList<>();
		int start = Math.floorMod(run, contenders.size());
		for (int i = 0; i < contenders.size(); i++) {
			rotated.add(contenders.get((start + i) % contenders.size()));
		}
		return rotated;
	}

	/**
	 * Runs one contender once and notes whether it handled every record.
	 * @param report the report to note the completion in
	 * @param contender the contender's name
	 * @param run the run number
	 * @param tally the tally the contender's workload fills
	 * @param body runs the contender until the tally is complete or the timeout passed
	 * @return the contender's throughput in records per second, {@code NaN} if it did not
	 * complete
	 */
	protected double measure(ScenarioReport report, String contender, int run, Tally tally, Body body)
			throws InterruptedException {
		String error = null;
		try {
			body.run();
		}
		catch (InterruptedException ex) {
			throw ex;
		}
		catch (ContenderUnavailableException ex) {
			report.excluded(contender, ex.getMessage());
			this.logger.warn(report.id() + " " + label(run) + " " + contender + " left out: " + ex.getMessage());
			return Double.NaN;
		}
		catch (Exception | LinkageError ex) {
			error = describe(ex);
			this.logger.warn(report.id() + " " + label(run) + " " + contender + " failed", ex);
		}
		if (error == null && !tally.isComplete()) {
			error = "timed out after " + this.settings.timeout().toSeconds() + " s";
		}
		report.completion(contender, run, tally.distinct(), tally.expected(), error);
		double perSecond = (error == null) ? tally.perSecond() : Double.NaN;
		this.logger.info(String.format(Locale.ROOT, "%s %s %-32s %s (%,d of %,d records%s)", report.id(), label(run),
				contender, Format.perSecond(perSecond), tally.distinct(), tally.expected(),
				(error != null) ? ", " + error : ""));
		return perSecond;
	}

	/** Waits for a tally with the configured timeout. */
	protected boolean await(Tally tally) throws InterruptedException {
		return tally.await(this.settings.timeout());
	}

	protected Duration timeout() {
		return this.settings.timeout();
	}

	protected String bootstrapServers() {
		return this.broker.bootstrapServers();
	}

	/**
	 * Runs Confluent's Parallel Consumer with KEY ordering until the tally is complete; a
	 * Parallel Consumer that cannot run with the Kafka client on the classpath is
	 * reported as unavailable rather than as a contender that lost records.
	 */
	protected void runParallelConsumer(String topic, String group, int concurrency, Workload workload, Tally tally)
			throws Exception {
		try {
			ParallelConsumerRunner.run(bootstrapServers(), topic, group, concurrency, workload, tally, timeout());
		}
		catch (InterruptedException ex) {
			throw ex;
		}
		catch (Exception | LinkageError ex) {
			throw new ContenderUnavailableException(describe(ex), ex);
		}
	}

	/** An exception and its causes on one line. */
	static String describe(Throwable ex) {
		StringBuilder description = new StringBuilder(ex.toString());
		Throwable cause = ex.getCause();
		while (cause != null && cause != cause.getCause()) {
			description.append("; caused by ").append(cause);
			cause = cause.getCause();
		}
		return description.toString();
	}

	/**
	 * Retry stage delays as the library's property takes them ({@code 2s,4s,6s}), in
	 * order.
	 */
	static List<Duration> delays(String delays) {
		return Arrays.stream(delays.split(",")).map(String::trim).map(DurationStyle::detectAndParse).toList();
	}

	static double millisBetween(long fromNanos, long toNanos) {
		return (fromNanos == Long.MIN_VALUE || toNanos == Long.MIN_VALUE) ? Double.NaN : (toNanos - fromNanos) / 1e6;
	}

	/** What a contender does in one run. */
	@FunctionalInterface
	interface Body {

		void run() throws Exception;

	}

	/**
	 * Thrown by a contender that cannot run here at all (for example a library that does
	 * not work with the Kafka client on the classpath): it is left out of the scenario,
	 * with the reason in the report, rather than counted as a contender that lost
	 * records.
	 */
	static class ContenderUnavailableException extends Exception {

		ContenderUnavailableException(String reason, @Nullable Throwable cause) {
			super(reason, cause);
		}

	}

}
