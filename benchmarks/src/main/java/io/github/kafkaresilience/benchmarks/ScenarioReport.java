package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What one scenario measured: its tables, its targets, whether each contender handled
 * every record in each run, and the key numbers by name.
 */
final class ScenarioReport {

	/**
	 * A table of the report.
	 *
	 * @param header the column titles
	 * @param rows the cells, row by row
	 */
	record Table(List<String> header, List<List<String>> rows) {
	}

	/**
	 * A target of the benchmark definition and how the measurement compares.
	 *
	 * @param target the target, in words
	 * @param measured the median that is compared
	 * @param met whether it is met, {@code null} when nothing was measured
	 */
	record TargetCheck(String target, String measured, @Nullable Boolean met) {
	}

	/**
	 * Whether a contender handled every record in one run.
	 *
	 * @param contender the contender
	 * @param run the run (1-based; 0 and below are warm-ups)
	 * @param processed distinct records handled
	 * @param expected records it had to handle
	 * @param error why it stopped, if it failed
	 */
	record Completion(String contender, int run, long processed, long expected, @Nullable String error) {

		boolean complete() {
			return this.error == null && this.processed == this.expected;
		}

	}

	private final String id;

	private final String title;

	private final List<String> setup = new ArrayList<>();

	private final List<Table> tables = new ArrayList<>();

	private final List<TargetCheck> targets = new ArrayList<>();

	private final List<Completion> completions = new ArrayList<>();

	private final List<String> notes = new ArrayList<>();

	private final Map<String, Double> measured = new LinkedHashMap<>();

	private final Map<String, String> excluded = new LinkedHashMap<>();

	ScenarioReport(String id, String title) {
		this.id = id;
		this.title = title;
	}

	String id() {
		return this.id;
	}

	String title() {
		return this.title;
	}

	/** A line describing the set-up (sizes, settings). */
	ScenarioReport setup(String line) {
		this.setup.add(line);
		return this;
	}

	ScenarioReport table(List<String> header, List<List<String>> rows) {
		this.tables.add(new Table(List.copyOf(header), rows.stream().map(List::copyOf).toList()));
		return this;
	}

	ScenarioReport target(String target, double measured, String formatted, boolean higherIsBetter, double limit) {
		Boolean met = Double.isNaN(measured) ? null : (higherIsBetter ? measured >= limit : measured <= limit);
		this.targets.add(new TargetCheck(target, formatted, met));
		return this;
	}

	ScenarioReport completion(String contender, int run, long processed, long expected, @Nullable String error) {
		this.completions.add(new Completion(contender, run, processed, expected, error));
		return this;
	}

	ScenarioReport note(String note) {
		this.notes.add(note);
		return this;
	}

	/** Records a key number (a median) under a name, for whoever checks the report. */
	ScenarioReport measured(String name, double value) {
		this.measured.put(name, value);
		return this;
	}

	/** Records that a contender was left out of the scenario, and why. */
	ScenarioReport excluded(String contender, String reason) {
		this.excluded.put(contender, reason);
		return this;
	}

	List<String> setup() {
		return List.copyOf(this.setup);
	}

	List<Table> tables() {
		return List.copyOf(this.tables);
	}

	List<TargetCheck> targets() {
		return List.copyOf(this.targets);
	}

	List<Completion> completions() {
		return List.copyOf(this.completions);
	}

	List<String> notes() {
		return List.copyOf(this.notes);
	}

	Map<String, Double> measured() {
		return Map.copyOf(this.measured);
	}

	Map<String, String> excluded() {
		return Map.copyOf(this.excluded);
	}

}
