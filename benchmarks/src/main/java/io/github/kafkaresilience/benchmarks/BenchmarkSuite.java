package io.github.kafkaresilience.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.logging.LoggingSystem;

/**
 * Runs the benchmark scenarios P1 to P5 (with P2W, an I/O-bound handler at high
 * concurrency, P3L, the healthy keys' latency during a failure storm, and P3B, a failure
 * burst on a freshly started instance), P7, a batch listener, P8, an outage of every key,
 * P9, scaling out, P9R, a rolling restart under load, P10, fair share between tenants
 * under one tenant's flood, and P10R, a rate limit, on one in-process Kafka broker and
 * writes a Markdown report with medians and ratios. {@code benchmarks/run.sh} builds the
 * project and starts this class; {@code --help} lists the options.
 */
public final class BenchmarkSuite {

	private static final Log logger = LogFactory.getLog(BenchmarkSuite.class);

	private BenchmarkSuite() {
	}

	public static void main(String[] args) {
		BenchmarkSettings settings;
		try {
			settings = BenchmarkSettings.parse(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(ex.getMessage());
			System.err.print(BenchmarkSettings.usage());
			System.exit(2);
			return;
		}
		if (settings.help()) {
			System.out.print(BenchmarkSettings.usage());
			return;
		}
		Result result = run(settings);
		System.out.println();
		System.out.println(result.markdown());
		System.out.println("Report written to " + result.output().toAbsolutePath());
		// the Kafka clients and the broker leave non-daemon threads behind
		System.exit(result.allComplete() ? 0 : 1);
	}

	/**
	 * Runs the chosen scenarios on a new broker and writes the report.
	 * @param settings sizes and options
	 * @return the reports of the scenarios and the Markdown written
	 */
	static Result run(BenchmarkSettings settings) {
		// logback is configured once from logback.xml; Spring Boot would reset it with
		// every
		// application the scenarios start, while the broker keeps logging
		System.setProperty(LoggingSystem.SYSTEM_PROPERTY, LoggingSystem.NONE);
		Map<String, String> environment = Environment.describe();
		environment.forEach((label, text) -> logger.info(label + ": " + text));
		long started = System.nanoTime();
		List<ScenarioReport> reports = new ArrayList<>();
		try (BenchmarkBroker broker = BenchmarkBroker.start()) {
			logger.info("Broker started at " + broker.bootstrapServers());
			for (String id : settings.scenarios()) {
				reports.add(runScenario(id, broker, settings));
			}
		}
		Duration took = Duration.ofNanos(System.nanoTime() - started);
		String markdown = ReportWriter.write(settings, environment, reports, took);
		Path output = settings.output();
		try {
			if (output.toAbsolutePath().getParent() != null) {
				Files.createDirectories(output.toAbsolutePath().getParent());
			}
			Files.writeString(output, markdown);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not write the report to " + output, ex);
		}
		return new Result(reports, markdown, output);
	}

	private static ScenarioReport runScenario(String id, BenchmarkBroker broker, BenchmarkSettings settings) {
		Scenario scenario = switch (id) {
			case "P1" -> new HappyPathScenario(broker, settings);
			case "P2" -> new SlowHandlerScenario(broker, settings);
			case "P2W" -> new IoBoundHandlerScenario(broker, settings);
			case "P2A" -> new AsyncHandlerScenario(broker, settings);
			case "P3" -> new FailureStormScenario(broker, settings);
			case "P3L" -> new HealthyKeyLatencyScenario(broker, settings);
			case "P3B" -> new FailureBurstScenario(broker, settings);
			case "P4" -> new ColdStartScenario(broker, settings);
			case "P5" -> new DelayPrecisionScenario(broker, settings);
			case "P7" -> new BatchListenerScenario(broker, settings);
			case "P8" -> new OutageScenario(broker, settings);
			case "P9" -> new ScaleOutScenario(broker, settings);
			case "P9R" -> new RollingRestartScenario(broker, settings);
			case "P10" -> new FairShareScenario(broker, settings);
			case "P10R" -> new RateLimitScenario(broker, settings);
			default -> throw new IllegalArgumentException("Unknown scenario " + id);
		};
		logger.info("Scenario " + id + " starts");
		long started = System.nanoTime();
		try {
			return scenario.run();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted in scenario " + id, ex);
		}
		catch (Exception ex) {
			logger.error("Scenario " + id + " failed", ex);
			return new ScenarioReport(id, "failed").completion("scenario " + id, 1, 0, 1, Scenario.describe(ex));
		}
		finally {
			logger.info("Scenario " + id + " took " + Duration.ofNanos(System.nanoTime() - started).toSeconds() + " s");
		}
	}

	/**
	 * The outcome of a suite run.
	 *
	 * @param reports one per scenario, in the order they ran
	 * @param markdown the report
	 * @param output where the report was written
	 */
	record Result(List<ScenarioReport> reports, String markdown, Path output) {

		/** Whether every contender that ran handled every record in every run. */
		boolean allComplete() {
			return this.reports.stream()
				.flatMap((report) -> report.completions().stream())
				.allMatch(ScenarioReport.Completion::complete);
		}

	}

}
