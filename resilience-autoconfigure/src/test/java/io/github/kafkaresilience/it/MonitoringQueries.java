package io.github.kafkaresilience.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.yaml.snakeyaml.Yaml;

import org.springframework.boot.json.JsonParserFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The queries of the Grafana dashboard and the Prometheus alert rules in
 * {@code monitoring/}, checked against what an application scrapes: every meter they
 * name, with every label they select or group by, is one the library registered, under
 * the name Micrometer's Prometheus registry gives it.
 */
final class MonitoringQueries {

	static final Path DASHBOARD = Path.of("..", "monitoring", "grafana", "kafka-resilience-dashboard.json");

	static final Path ALERTS = Path.of("..", "monitoring", "prometheus", "kafka-resilience-alerts.yml");

	private static final Pattern METRIC = Pattern.compile("\\bkafka_resilience_[a-z0-9_]+\\b");

	/**
	 * A selector's label names: {@code name="..."}, {@code name!="..."},
	 * {@code name=~"..."}.
	 */
	private static final Pattern LABEL = Pattern.compile("([a-z_]+)\\s*(?:=~|!~|!=|=)\\s*\"");

	private static final Pattern BY = Pattern.compile("\\bby\\s*\\(([^)]*)\\)");

	private MonitoringQueries() {
	}

	/**
	 * A registry for the library's meter binders that also keeps what Prometheus would
	 * scrape.
	 */
	static CompositeMeterRegistry registry() {
		CompositeMeterRegistry registry = new CompositeMeterRegistry();
		registry.add(new SimpleMeterRegistry());
		registry.add(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
		return registry;
	}

	/**
	 * What Prometheus would scrape from the registry now: each series' name and its label
	 * names.
	 */
	static Map<String, Set<String>> scrape(CompositeMeterRegistry registry) {
		PrometheusMeterRegistry prometheus = registry.getRegistries()
			.stream()
			.filter(PrometheusMeterRegistry.class::isInstance)
			.map(PrometheusMeterRegistry.class::cast)
			.findFirst()
			.orElseThrow();
		Map<String, Set<String>> series = new TreeMap<>();
		for (String line : prometheus.scrape().split("\n")) {
			if (line.isBlank() || line.startsWith("#")) {
				continue;
			}
			int brace = line.indexOf('{');
			int space = line.indexOf(' ');
			String name = line.substring(0, (brace >= 0 && brace < space) ? brace : space);
			Set<String> labels = series.computeIfAbsent(name, (n) -> new LinkedHashSet<>());
			if (brace >= 0 && brace < space) {
				Matcher label = LABEL.matcher(line.substring(brace, line.lastIndexOf('}') + 1));
				while (label.find()) {
					labels.add(label.group(1));
				}
			}
		}
		return series;
	}

	/** Every PromQL expression of the dashboard's panels and of the alert rules. */
	static List<String> expressions() {
		List<String> expressions = new ArrayList<>();
		Map<String, Object> dashboard = JsonParserFactory.getJsonParser().parseMap(read(DASHBOARD));
		for (Object panel : (List<?>) dashboard.get("panels")) {
			Object targets = ((Map<?, ?>) panel).get("targets");
			if (targets != null) {
				((List<?>) targets).forEach((target) -> expressions.add((String) ((Map<?, ?>) target).get("expr")));
			}
		}
		Map<String, Object> alerts = new Yaml().load(read(ALERTS));
		for (Object group : (List<?>) alerts.get("groups")) {
			for (Object rule : (List<?>) ((Map<?, ?>) group).get("rules")) {
				expressions.add(String.valueOf(((Map<?, ?>) rule).get("expr")));
			}
		}
		return expressions;
	}

	/** The alert rules, as Prometheus reads them. */
	static List<Map<String, Object>> alertRules() {
		Map<String, Object> alerts = new Yaml().load(read(ALERTS));
		List<Map<String, Object>> rules = new ArrayList<>();
		for (Object group : (List<?>) alerts.get("groups")) {
			for (Object rule : (List<?>) ((Map<?, ?>) group).get("rules")) {
				@SuppressWarnings("unchecked")
				Map<String, Object> map = (Map<String, Object>) rule;
				rules.add(map);
			}
		}
		return rules;
	}

	/** The meters an expression names. */
	static Set<String> metrics(String expression) {
		Set<String> metrics = new LinkedHashSet<>();
		Matcher metric = METRIC.matcher(expression);
		while (metric.find()) {
			metrics.add(metric.group());
		}
		return metrics;
	}

	/**
	 * Asserts that every meter the queries name that {@code which} accepts was scraped,
	 * with the labels its selectors name, and that the labels an expression of only such
	 * meters groups by are labels of its meters.
	 * @return the meters checked
	 */
	static Set<String> assertScraped(Map<String, Set<String>> scraped, Predicate<String> which) {
		Set<String> checked = new LinkedHashSet<>();
		for (String expression : expressions()) {
			Set<String> named = metrics(expression);
			Set<String> labelsOfExpression = new LinkedHashSet<>();
			boolean all = true;
			for (String metric : named) {
				if (!which.test(metric)) {
					all = false;
					continue;
				}
				checked.add(metric);
				assertThat(scraped).as("meters scraped, for %s", expression).containsKey(metric);
				labelsOfExpression.addAll(scraped.get(metric));
				Matcher selector = Pattern.compile(Pattern.quote(metric) + "\\{([^}]*)\\}").matcher(expression);
				while (selector.find()) {
					Matcher label = LABEL.matcher(selector.group(1));
					while (label.find()) {
						assertThat(scraped.get(metric)).as("labels of %s, in %s", metric, expression)
							.contains(label.group(1));
					}
				}
			}
			if (all && !named.isEmpty()) {
				Matcher by = BY.matcher(expression);
				while (by.find()) {
					for (String label : by.group(1).split(",")) {
						assertThat(labelsOfExpression).as("labels grouped by in %s", expression)
							.contains(label.strip());
					}
				}
			}
		}
		return checked;
	}

	private static String read(Path path) {
		try {
			return Files.readString(path);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
