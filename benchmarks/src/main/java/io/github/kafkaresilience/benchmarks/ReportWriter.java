package io.github.kafkaresilience.benchmarks;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;

/**
 * Writes the suite's results as Markdown: how and where they were measured, the targets,
 * then one section per scenario.
 */
final class ReportWriter {

	private ReportWriter() {
	}

	static String write(BenchmarkSettings settings, Map<String, String> environment, List<ScenarioReport> reports,
			Duration took) {
		StringBuilder md = new StringBuilder();
		md.append("# kafka-resilience benchmark results\n\n");
		if (settings.smoke()) {
			md.append(
					"> **Smoke sizes.** This run only checks that every scenario and contender works. Its numbers are "
							+ "not comparable with full runs and say nothing about performance.\n\n");
		}
		md.append("| | |\n|---|---|\n");
		row(md, "date",
				ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")));
		row(md, "command", "`" + (settings.command().isBlank() ? "BenchmarkSuite" : settings.command()) + "`");
		List<String> changed = settings.changedSizes();
		row(md, "sizes", changed.isEmpty() ? "the full sizes of docs/BENCHMARKS.md"
				: (settings.smoke() ? "smoke sizes" : "full sizes except") + ": " + String.join(" ", changed));
		row(md, "runs",
				settings.runs() + " measured run(s) per scenario"
						+ ((settings.warmups() > 0) ? ", after " + settings.warmups()
								+ " unreported warm-up run(s) of P1, P2, P2W, P2A, P3, P3L, P3B and P7" : "")
						+ "; tables show the median, then every run in order");
		environment.forEach((label, text) -> row(md, label, text));
		row(md, "broker",
				"one in-process KRaft broker (spring-kafka-test EmbeddedKafkaKraftBroker) in the suite's JVM, "
						+ "shared by every scenario and contender");
		row(md, "wall time", minutesAndSeconds(took));
		md.append('\n');

		md.append("## Targets\n\n| scenario | target | measured (median) | met |\n|---|---|---|---|\n");
		for (ScenarioReport report : reports) {
			for (ScenarioReport.TargetCheck target : report.targets()) {
				md.append("| ")
					.append(report.id())
					.append(" | ")
					.append(cell(target.target()))
					.append(" | ")
					.append(cell(target.measured()))
					.append(" | ")
					.append((target.met() == null) ? "not measured" : target.met() ? "yes" : "**no**")
					.append(" |\n");
			}
		}
		md.append('\n');

		for (ScenarioReport report : reports) {
			md.append("## ").append(report.id()).append(" ").append(report.title()).append("\n\n");
			report.setup().forEach((line) -> md.append("- ").append(line).append('\n'));
			md.append('\n');
			for (ScenarioReport.Table table : report.tables()) {
				md.append("| ")
					.append(String.join(" | ", table.header().stream().map(ReportWriter::cell).toList()))
					.append(" |\n|");
				table.header().forEach((column) -> md.append("---|"));
				md.append('\n');
				for (List<String> cells : table.rows()) {
					md.append("| ")
						.append(String.join(" | ", cells.stream().map(ReportWriter::cell).toList()))
						.append(" |\n");
				}
				md.append('\n');
			}
			report.excluded()
				.forEach((contender, reason) -> md.append("- **")
					.append(contender)
					.append(" left out:** ")
					.append(cell(reason))
					.append('\n'));
			report.notes().forEach((note) -> md.append("- ").append(note).append('\n'));
			for (ScenarioReport.Completion completion : report.completions()) {
				if (!completion.complete()) {
					md.append("- **Incomplete:** ")
						.append(completion.contender())
						.append(", run ")
						.append((completion.run() > 0) ? completion.run() : "warm-up")
						.append(": ")
						.append(Format.count(completion.processed()))
						.append(" of ")
						.append(Format.count(completion.expected()))
						.append(" records")
						.append((completion.error() != null) ? " (" + cell(completion.error()) + ")" : "")
						.append('\n');
				}
			}
			md.append('\n');
		}
		return md.toString();
	}

	private static void row(StringBuilder md, String label, String text) {
		md.append("| ").append(label).append(" | ").append(cell(text)).append(" |\n");
	}

	private static String cell(String text) {
		return text.replace("|", "\\|").replace("\n", " ");
	}

	private static String minutesAndSeconds(Duration took) {
		return (took.toMinutes() > 0) ? took.toMinutes() + " min " + took.toSecondsPart() + " s"
				: took.toSeconds() + " s";
	}

}
