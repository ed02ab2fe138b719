package io.github.kafkaresilience.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleFunction;
import java.util.stream.Collectors;

/**
 * The values of one measurement over the runs of a scenario; a run that measured nothing
 * (an incomplete contender) adds {@code NaN}, which the median leaves out.
 */
final class Series {

	private final List<Double> values = new ArrayList<>();

	/** A series of the given values, in order. */
	static Series of(double... values) {
		Series series = new Series();
		for (double value : values) {
			series.add(value);
		}
		return series;
	}

	void add(double value) {
		this.values.add(value);
	}

	List<Double> values() {
		return List.copyOf(this.values);
	}

	boolean isEmpty() {
		return this.values.stream().allMatch((value) -> value.isNaN());
	}

	/** The median of the measured values, {@code NaN} when there are none. */
	double median() {
		List<Double> sorted = this.values.stream().filter((value) -> !value.isNaN()).sorted().toList();
		if (sorted.isEmpty()) {
			return Double.NaN;
		}
		int middle = sorted.size() / 2;
		return (sorted.size() % 2 == 1) ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
	}

	/** How many values were measured ({@code NaN} left out). */
	int measured() {
		return (int) this.values.stream().filter((value) -> !value.isNaN()).count();
	}

	/** The smallest measured value, {@code NaN} when there are none. */
	double min() {
		return this.values.stream()
			.filter((value) -> !value.isNaN())
			.mapToDouble(Double::doubleValue)
			.min()
			.orElse(Double.NaN);
	}

	/** The largest measured value, {@code NaN} when there are none. */
	double max() {
		return this.values.stream()
			.filter((value) -> !value.isNaN())
			.mapToDouble(Double::doubleValue)
			.max()
			.orElse(Double.NaN);
	}

	/**
	 * How far the measured values stray from their median at most, relative to it: 0.1
	 * means every value lies within ±10 % of the median. {@code NaN} with fewer than two
	 * values.
	 */
	double spread() {
		double median = median();
		if (measured() < 2 || median == 0) {
			return Double.NaN;
		}
		return Math.max(max() - median, median - min()) / Math.abs(median);
	}

	/** Every run's value, in run order. */
	String runs(DoubleFunction<String> format) {
		return this.values.stream()
			.map((value) -> value.isNaN() ? "–" : format.apply(value))
			.collect(Collectors.joining(" · "));
	}

	/**
	 * The run-by-run ratio of two series (each run pairs contenders measured back to back
	 * on the same broker).
	 */
	static Series ratio(Series numerator, Series denominator) {
		Series ratio = new Series();
		for (int i = 0; i < Math.min(numerator.values.size(), denominator.values.size()); i++) {
			ratio.add(numerator.values.get(i) / denominator.values.get(i));
		}
		return ratio;
	}

	/** The run-by-run difference of two series. */
	static Series difference(Series minuend, Series subtrahend) {
		Series difference = new Series();
		for (int i = 0; i < Math.min(minuend.values.size(), subtrahend.values.size()); i++) {
			difference.add(minuend.values.get(i) - subtrahend.values.get(i));
		}
		return difference;
	}

	/** Every value of {@code series} divided by a constant. */
	static Series ratio(Series series, double denominator) {
		Series ratio = new Series();
		series.values.forEach((value) -> ratio.add(value / denominator));
		return ratio;
	}

}
