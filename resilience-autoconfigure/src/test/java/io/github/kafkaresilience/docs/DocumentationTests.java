package io.github.kafkaresilience.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.observation.DefaultAttemptObservationConvention;
import io.github.kafkaresilience.observation.ObservedAttempts;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.kafka.support.micrometer.KafkaTemplateObservation.DefaultKafkaTemplateObservationConvention;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documentation cannot drift from the code: the property tables of README.md and
 * docs/CONFIGURATION.md list exactly the properties of the generated configuration metadata,
 * with its defaults, docs/METRICS.md names every meter the code registers, and docs/TRACING.md
 * the names and key values of the observations.
 */
class DocumentationTests {

	private static final Path MODULE = Path.of("").toAbsolutePath();

	private static final Path ROOT = MODULE.getParent();

	private static final Pattern ROW = Pattern.compile("^\\| `(kafka\\.resilience\\.[a-z.-]+)` \\| ([^|]*) \\|", Pattern.MULTILINE);

	private static final Pattern METER = Pattern.compile("\"(kafka\\.resilience\\.[a-z.]+)\"");

	@Test
	void theReadmeTableListsEveryPropertyWithItsDefault() throws IOException {
		assertTableMatchesMetadata(ROOT.resolve("README.md"));
	}

	@Test
	void theConfigurationGuideListsEveryPropertyWithItsDefault() throws IOException {
		assertTableMatchesMetadata(ROOT.resolve("docs/CONFIGURATION.md"));
	}

	@Test
	void theMetricsGuideNamesEveryMeter() throws IOException {
		Set<String> meters = new TreeSet<>();
		try (Stream<Path> sources = Files.walk(MODULE.resolve("src/main/java/io/github/kafkaresilience/metrics"))) {
			for (Path source : sources.filter((path) -> path.toString().endsWith(".java")).toList()) {
				Matcher matcher = METER.matcher(Files.readString(source));
				while (matcher.find()) {
					meters.add(matcher.group(1));
				}
			}
		}
		assertThat(meters).as("meters found in the code").hasSizeGreaterThan(15);
		String guide = Files.readString(ROOT.resolve("docs/METRICS.md"));
		assertThat(meters).allSatisfy((meter) -> assertThat(guide).as(meter).contains("`" + meter + "`"));
	}

	@Test
	void theTracingGuideNamesWhatTheObservationsAreNamedAndTaggedWith() throws IOException {
		String guide = Files.readString(ROOT.resolve("docs/TRACING.md"));
		assertThat(guide).contains("`" + DefaultAttemptObservationConvention.INSTANCE.getName() + "`",
				"`" + DefaultKafkaTemplateObservationConvention.INSTANCE.getName() + "`",
				"`" + DefaultAttemptObservationConvention.STAGE + "`",
				"`" + DefaultAttemptObservationConvention.OUTCOME + "`",
				"`" + DefaultAttemptObservationConvention.UNKNOWN + "`", "`" + ObservedAttempts.SENDER_NAME + "`");
		for (HandlerResult.Outcome outcome : HandlerResult.Outcome.values()) {
			assertThat(guide).contains("`" + outcome.name().toLowerCase(Locale.ROOT) + "`");
		}
	}

	private static void assertTableMatchesMetadata(Path document) throws IOException {
		Map<String, String> documented = new LinkedHashMap<>();
		Matcher row = ROW.matcher(Files.readString(document));
		while (row.find()) {
			assertThat(documented.put(row.group(1), row.group(2).trim())).as("%s listed twice in %s", row.group(1), document)
				.isNull();
		}
		Map<String, String> metadata = metadata();
		assertThat(documented.keySet()).as("properties of %s", document.getFileName())
			.containsExactlyInAnyOrderElementsOf(metadata.keySet());
		metadata.forEach((name, defaultValue) -> {
			if (defaultValue != null) {
				assertThat(documented.get(name)).as("default of %s in %s", name, document.getFileName())
					.contains("`" + defaultValue + "`");
			}
		});
	}

	/** The library's properties and their defaults, from the configuration processor's output. */
	private static Map<String, String> metadata() throws IOException {
		Path file = MODULE.resolve("target/classes/META-INF/spring-configuration-metadata.json");
		JsonNode root = JsonMapper.builder().build().readTree(Files.readString(file));
		Map<String, String> properties = new LinkedHashMap<>();
		for (JsonNode property : root.get("properties")) {
			String name = property.get("name").asString();
			if (name.startsWith("kafka.resilience.")) {
				JsonNode defaultValue = property.get("defaultValue");
				properties.put(name, (defaultValue == null || defaultValue.isNull()) ? null : defaultValue.asString());
			}
		}
		assertThat(properties).as("properties in the metadata").hasSizeGreaterThan(20);
		return properties;
	}

}
