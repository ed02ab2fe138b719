package io.github.kafkaresilience.docs;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.github.kafkaresilience.ladder.HandlerResult;
import io.github.kafkaresilience.observation.DefaultAttemptObservationConvention;
import io.github.kafkaresilience.internal.observation.ObservedAttempts;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanUtils;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.kafka.support.micrometer.KafkaTemplateObservation.DefaultKafkaTemplateObservationConvention;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documentation cannot drift from the code: the property table of
 * docs/CONFIGURATION.md lists exactly the properties of the generated configuration
 * metadata, with the defaults of the metadata and of the bound properties (which the
 * metadata must agree with), docs/METRICS.md names every meter the code registers,
 * docs/TRACING.md the names and key values of the observations, and every place the code
 * cites the protocol names a rule or a section that docs/PROTOCOL.md has.
 */
class DocumentationTests {

	private static final Path MODULE = Path.of("").toAbsolutePath();

	private static final Path ROOT = MODULE.getParent();

	private static final Pattern ROW = Pattern.compile("^\\| `(kafka\\.resilience\\.[a-z.-]+)` \\| ([^|]*) \\|",
			Pattern.MULTILINE);

	private static final Map<ChronoUnit, String> UNITS = Map.of(ChronoUnit.DAYS, "d", ChronoUnit.HOURS, "h",
			ChronoUnit.MINUTES, "m", ChronoUnit.SECONDS, "s");

	private static final Pattern METER = Pattern.compile("\"(kafka\\.resilience\\.[a-z.]+)\"");

	/**
	 * How the code cites the protocol: {@code docs/PROTOCOL.md, } then what it refers to.
	 */
	private static final String PROTOCOL_CITATION = "docs/PROTOCOL" + ".md, ";

	/**
	 * One thing a citation refers to: {@code rule 2}, {@code rule 2.5}, a further number
	 * of a list, or a heading.
	 */
	private static final Pattern REFERENCE = Pattern.compile("(?:rules? )?(\\d+)(?:\\.(\\d+))?|\"([^\"]+)\"");

	/** What joins the references of one citation: {@code rules 1, 2 and 6}. */
	private static final Pattern JOINT = Pattern.compile(", | and ");

	/**
	 * A rule named outside a citation, so without saying where the rule is written down.
	 */
	private static final Pattern LOOSE_RULE = Pattern.compile("\\brules? \\d");

	/** Any mention of the protocol page, which must be the start of a citation. */
	private static final Pattern PROTOCOL_PAGE = Pattern.compile("(?:[\\w./]*/)?PROTOCOL\\.md");

	/** What continues a comment on the next line, so that a citation may be wrapped. */
	private static final Pattern CONTINUATION = Pattern.compile("^[ \\t]*(?:\\*(?!/)|//+)?[ \\t]*");

	/**
	 * Properties whose default is worked out when the application starts, so that their
	 * bound value is not the default users get: the table says how it is worked out.
	 */
	private static final Set<String> COMPUTED_DEFAULTS = Set.of(
			// the HOSTNAME environment variable, then the local host name
			"kafka.resilience.instance-id",
			// one more than the number of delays
			"kafka.resilience.retry.max-attempts",
			// the probe interval, a fixed pace
			"kafka.resilience.outage.max-probe-interval",
			// null bound: Boot's initializer falls back to getDefaultSchemaLocation()
			"kafka.resilience.idempotency.jdbc.schema",
			// told from the DataSource
			"kafka.resilience.idempotency.jdbc.platform");

	@Test
	void theConfigurationGuideListsEveryPropertyWithItsDefault() throws IOException {
		assertTableMatchesMetadata(ROOT.resolve("docs/CONFIGURATION.md"));
	}

	@Test
	void theConfigurationGuideGivesTheDefaultsThePropertiesHaveAtRunTime() throws Exception {
		Map<String, String> documented = table(ROOT.resolve("docs/CONFIGURATION.md"));
		Map<String, @Nullable String> bound = boundDefaults();
		List<String> wrong = new ArrayList<>();
		bound.forEach((name, value) -> {
			String cell = documented.get(name);
			if (cell == null || COMPUTED_DEFAULTS.contains(name)) {
				return;
			}
			if (value == null) {
				if (!cell.startsWith("none")) {
					wrong.add(name + ": none at run time, documented as " + cell);
				}
			}
			else if (!cell.contains("`" + value + "`")) {
				wrong.add(name + ": `" + value + "` at run time, documented as " + cell);
			}
		});
		assertThat(wrong).as("defaults of docs/CONFIGURATION.md that the bound properties do not have").isEmpty();
	}

	@Test
	void theMetadataGivesTheDefaultsThePropertiesHaveAtRunTime() throws Exception {
		Map<String, @Nullable String> metadata = metadata();
		Map<String, @Nullable String> bound = boundDefaults();
		List<String> wrong = new ArrayList<>();
		bound.forEach((name, value) -> {
			if (!COMPUTED_DEFAULTS.contains(name) && !Objects.equals(value, metadata.get(name))) {
				wrong.add(name + ": " + value + " at run time, " + metadata.get(name) + " in the metadata");
			}
		});
		assertThat(wrong).as("defaults of the configuration metadata that the bound properties do not have").isEmpty();
	}

	@Test
	void theMetricsGuideNamesEveryMeter() throws IOException {
		Set<String> meters = new TreeSet<>();
		try (Stream<Path> sources = Files
			.walk(MODULE.resolve("src/main/java/io/github/kafkaresilience/internal/metrics"))) {
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

	@Test
	void everyProtocolCitationInTheCodeNamesARuleOrASectionOfTheProtocolPage() throws IOException {
		ProtocolPage page = ProtocolPage.read(ROOT.resolve("docs/PROTOCOL.md"));
		assertThat(page.rules()).as("rules of docs/PROTOCOL.md").hasSizeGreaterThanOrEqualTo(9);
		List<String> wrong = new ArrayList<>();
		int citations = 0;
		for (Path source : javaSources()) {
			citations += checkCitations(source, page, wrong);
		}
		assertThat(citations).as("protocol citations found in the code").isGreaterThan(40);
		assertThat(wrong).as("citations of docs/PROTOCOL.md that it does not have").isEmpty();
	}

	@Test
	void noSourceOrPageCitesTheProtocolByTheSectionNumbersOfAnEarlierSpecification() throws IOException {
		List<Path> files = new ArrayList<>(javaSources());
		try (Stream<Path> pages = Files.list(ROOT.resolve("docs"))) {
			pages.filter((path) -> path.toString().endsWith(".md")).forEach(files::add);
		}
		files.add(ROOT.resolve("README.md"));
		List<String> wrong = new ArrayList<>();
		for (Path file : files) {
			List<String> lines = Files.readAllLines(file);
			for (int i = 0; i < lines.size(); i++) {
				if (lines.get(i).contains("\u00a7")) {
					wrong.add(ROOT.relativize(file) + ":" + (i + 1) + ": " + lines.get(i).trim());
				}
			}
		}
		assertThat(wrong)
			.as("'\u00a7' numbers, which docs/PROTOCOL.md does not have: cite %srule n or a heading", PROTOCOL_CITATION)
			.isEmpty();
	}

	private static void assertTableMatchesMetadata(Path document) throws IOException {
		Map<String, String> documented = table(document);
		Map<String, @Nullable String> metadata = metadata();
		assertThat(documented.keySet()).as("properties of %s", document.getFileName())
			.containsExactlyInAnyOrderElementsOf(metadata.keySet());
		metadata.forEach((name, defaultValue) -> {
			if (defaultValue != null) {
				assertThat(documented.get(name)).as("default of %s in %s", name, document.getFileName())
					.contains("`" + defaultValue + "`");
			}
		});
	}

	/** The property table of a page: each property's name and its default's cell. */
	private static Map<String, String> table(Path document) throws IOException {
		Map<String, String> documented = new LinkedHashMap<>();
		Matcher row = ROW.matcher(Files.readString(document));
		while (row.find()) {
			assertThat(documented.put(row.group(1), row.group(2).trim()))
				.as("%s listed twice in %s", row.group(1), document)
				.isNull();
		}
		return documented;
	}

	private static JsonNode metadataFile() throws IOException {
		Path file = MODULE.resolve("target/classes/META-INF/spring-configuration-metadata.json");
		return JsonMapper.builder().build().readTree(Files.readString(file));
	}

	/**
	 * The library's properties and their defaults, from the configuration processor's
	 * output, a list's elements joined by {@code ", "}.
	 */
	private static Map<String, @Nullable String> metadata() throws IOException {
		Map<String, @Nullable String> properties = new LinkedHashMap<>();
		for (JsonNode property : metadataFile().get("properties")) {
			String name = property.get("name").asString();
			if (name.startsWith("kafka.resilience.")) {
				JsonNode defaultValue = property.get("defaultValue");
				String rendered = null;
				if (defaultValue != null && defaultValue.isArray()) {
					List<String> elements = new ArrayList<>();
					defaultValue.forEach((element) -> elements.add(element.asString()));
					rendered = elements.isEmpty() ? null : String.join(", ", elements);
				}
				else if (defaultValue != null && !defaultValue.isNull()) {
					rendered = defaultValue.asString();
				}
				properties.put(name, rendered);
			}
		}
		assertThat(properties).as("properties in the metadata").hasSizeGreaterThan(20);
		return properties;
	}

	/**
	 * The library's properties and the values they have when nothing is set, rendered as
	 * the documentation writes defaults: every {@code @ConfigurationProperties} class of
	 * the metadata is bound to an empty environment, as Boot binds it, and each property
	 * is read through its getters.
	 */
	private static Map<String, @Nullable String> boundDefaults() throws Exception {
		Map<String, Object> roots = new TreeMap<>(
				Comparator.<String>comparingInt(String::length).reversed().thenComparing(Comparator.naturalOrder()));
		Binder binder = new Binder(new MapConfigurationPropertySource());
		for (JsonNode group : metadataFile().get("groups")) {
			Class<?> type = ClassUtils.forName(group.get("type").asString(), null);
			ConfigurationProperties annotation = AnnotatedElementUtils.findMergedAnnotation(type,
					ConfigurationProperties.class);
			if (annotation != null && group.get("name").asString().equals(annotation.prefix())
					&& !roots.containsKey(annotation.prefix())) {
				Object properties = BeanUtils.instantiateClass(type);
				binder.bind(annotation.prefix(), Bindable.ofInstance(properties));
				roots.put(annotation.prefix(), properties);
			}
		}
		assertThat(roots).as("@ConfigurationProperties classes in the metadata")
			.containsKeys("kafka.resilience", "kafka.resilience.idempotency.jdbc");
		Map<String, @Nullable String> defaults = new LinkedHashMap<>();
		for (String name : metadata().keySet()) {
			String prefix = roots.keySet()
				.stream()
				.filter((candidate) -> name.startsWith(candidate + "."))
				.findFirst()
				.orElseThrow(() -> new AssertionError("no @ConfigurationProperties class binds " + name));
			String path = Arrays.stream(name.substring(prefix.length() + 1).split("\\."))
				.map(DocumentationTests::camelCase)
				.collect(Collectors.joining("."));
			defaults.put(name, rendered(new BeanWrapperImpl(roots.get(prefix)).getPropertyValue(path)));
		}
		return defaults;
	}

	private static String camelCase(String kebab) {
		StringBuilder camel = new StringBuilder();
		for (String word : kebab.split("-")) {
			camel.append(camel.isEmpty() ? word : StringUtils.capitalize(word));
		}
		return camel.toString();
	}

	/**
	 * A value as the documentation writes it: {@code 30s}, {@code 0.95},
	 * {@code when-authorized}, a list's elements joined by {@code ", "}; {@code null} for
	 * none (no value, an empty list or map).
	 */
	private static @Nullable String rendered(@Nullable Object value) {
		if (value == null) {
			return null;
		}
		if (value instanceof Duration duration) {
			return rendered(duration);
		}
		if (value instanceof Collection<?> collection) {
			return collection.isEmpty() ? null
					: collection.stream().map(DocumentationTests::rendered).collect(Collectors.joining(", "));
		}
		if (value instanceof Map<?, ?> map) {
			return map.isEmpty() ? null : map.toString();
		}
		if (value instanceof Enum<?> constant) {
			return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
		}
		if (value instanceof Double || value instanceof Float) {
			return BigDecimal.valueOf(((Number) value).doubleValue()).stripTrailingZeros().toPlainString();
		}
		if (value instanceof Class<?> type) {
			return type.getName();
		}
		return value.toString();
	}

	private static String rendered(Duration duration) {
		if (duration.isZero()) {
			return "0";
		}
		for (ChronoUnit unit : List.of(ChronoUnit.DAYS, ChronoUnit.HOURS, ChronoUnit.MINUTES, ChronoUnit.SECONDS)) {
			if (duration.toMillis() % unit.getDuration().toMillis() == 0) {
				return (duration.toMillis() / unit.getDuration().toMillis()) + UNITS.get(unit);
			}
		}
		return duration.toMillis() + "ms";
	}

	/**
	 * Adds to {@code wrong} every citation of the protocol in a source that names what
	 * the page does not have, and every other way of citing it.
	 * @return the number of citations in the source
	 */
	private static int checkCitations(Path source, ProtocolPage page, List<String> wrong) throws IOException {
		Joined joined = Joined.of(Files.readString(source));
		String text = joined.text();
		String where = ROOT.relativize(source).toString();
		boolean[] cited = new boolean[text.length()];
		int citations = 0;
		for (int at = text.indexOf(PROTOCOL_CITATION); at >= 0; at = text.indexOf(PROTOCOL_CITATION, at + 1)) {
			citations++;
			int end = at + PROTOCOL_CITATION.length();
			Matcher reference = REFERENCE.matcher(text).region(end, text.length());
			if (!reference.lookingAt()) {
				wrong.add(where + ":" + joined.line(at) + ": a citation of docs/PROTOCOL.md names no rule (rule 2, "
						+ "rule 2.5) and no section (\"Lock records\")");
				continue;
			}
			while (reference != null) {
				String problem = page.problem(reference);
				if (problem != null) {
					wrong.add(where + ":" + joined.line(at) + ": " + problem);
				}
				end = reference.end();
				reference = nextReference(text, end);
			}
			Arrays.fill(cited, at, end, true);
		}
		Matcher loose = LOOSE_RULE.matcher(text);
		while (loose.find()) {
			if (!cited[loose.start()]) {
				wrong.add(where + ":" + joined.line(loose.start()) + ": '" + loose.group()
						+ "...' without the page; write " + PROTOCOL_CITATION + "rule n");
			}
		}
		Matcher mention = PROTOCOL_PAGE.matcher(text);
		while (mention.find()) {
			if (!text.startsWith(PROTOCOL_CITATION, mention.start())) {
				wrong.add(where + ":" + joined.line(mention.start()) + ": cite the protocol as " + PROTOCOL_CITATION
						+ "rule n or " + PROTOCOL_CITATION + "\"<heading>\"");
			}
		}
		return citations;
	}

	/**
	 * The reference after {@code end} in the same citation ({@code , 2} or
	 * {@code  and "Topics"}), or {@code null}.
	 */
	private static @Nullable Matcher nextReference(String text, int end) {
		Matcher joint = JOINT.matcher(text).region(end, text.length());
		if (!joint.lookingAt()) {
			return null;
		}
		Matcher next = REFERENCE.matcher(text).region(joint.end(), text.length());
		return next.lookingAt() ? next : null;
	}

	/** The Java sources of every module, main and test, but this class's own. */
	private static List<Path> javaSources() throws IOException {
		try (Stream<Path> paths = Files.walk(ROOT)) {
			List<Path> sources = paths.filter((path) -> path.toString().endsWith(".java"))
				.filter((
						path) -> ROOT.relativize(path).toString().contains("src" + path.getFileSystem().getSeparator()))
				.filter((path) -> !ROOT.relativize(path)
					.toString()
					.contains("target" + path.getFileSystem().getSeparator()))
				.filter((path) -> !path.getFileName()
					.toString()
					.equals(DocumentationTests.class.getSimpleName() + ".java"))
				.sorted()
				.toList();
			assertThat(sources).as("Java sources under %s", ROOT).hasSizeGreaterThan(100);
			return sources;
		}
	}

	/**
	 * A source with its lines joined by single spaces and comment markers taken off the
	 * continued lines, so that a citation wrapped over two lines reads as one.
	 */
	private record Joined(String text, int[] lines) {

		static Joined of(String source) {
			StringBuilder text = new StringBuilder(source.length());
			List<Integer> lineOfChar = new ArrayList<>(source.length());
			String[] lines = source.split("\\R", -1);
			for (int i = 0; i < lines.length; i++) {
				String line = CONTINUATION.matcher(lines[i]).replaceFirst("");
				if (i > 0) {
					text.append(' ');
					lineOfChar.add(i + 1);
				}
				text.append(line);
				for (int c = 0; c < line.length(); c++) {
					lineOfChar.add(i + 1);
				}
			}
			return new Joined(text.toString(), lineOfChar.stream().mapToInt(Integer::intValue).toArray());
		}

		int line(int index) {
			return this.lines[index];
		}

	}

	/**
	 * The rules of docs/PROTOCOL.md (with the numbers of the list items of each) and its
	 * headings.
	 */
	private record ProtocolPage(Map<Integer, Set<Integer>> rules, Set<String> headings) {

		private static final Pattern HEADING = Pattern.compile("^#{2,3} (.+)$", Pattern.MULTILINE);

		private static final Pattern RULE = Pattern.compile("(\\d+)\\. .*");

		private static final Pattern ITEM = Pattern.compile("^(\\d+)\\. ", Pattern.MULTILINE);

		static ProtocolPage read(Path page) throws IOException {
			String text = Files.readString(page);
			Map<Integer, Set<Integer>> rules = new HashMap<>();
			Set<String> headings = new TreeSet<>();
			Matcher heading = HEADING.matcher(text);
			List<int[]> sections = new ArrayList<>();
			while (heading.find()) {
				String title = heading.group(1).trim();
				headings.add(title);
				Matcher rule = RULE.matcher(title);
				if (heading.group().startsWith("### ") && rule.matches()) {
					sections.add(new int[] { Integer.parseInt(rule.group(1)), heading.end() });
				}
				else {
					sections.add(new int[] { -1, heading.end() });
				}
			}
			for (int i = 0; i < sections.size(); i++) {
				int number = sections.get(i)[0];
				if (number < 0) {
					continue;
				}
				int end = (i + 1 < sections.size()) ? text.lastIndexOf('\n', sections.get(i + 1)[1] - 1)
						: text.length();
				Set<Integer> items = new TreeSet<>();
				Matcher item = ITEM.matcher(text).region(sections.get(i)[1], Math.max(end, sections.get(i)[1]));
				while (item.find()) {
					items.add(Integer.parseInt(item.group(1)));
				}
				assertThat(rules.put(number, items)).as("rule %d numbered twice in docs/PROTOCOL.md", number).isNull();
			}
			return new ProtocolPage(rules, headings);
		}

		/**
		 * What is wrong with a reference to this page, or {@code null} when the page has
		 * it.
		 */
		@Nullable String problem(Matcher reference) {
			if (reference.group(3) != null) {
				return this.headings.contains(reference.group(3)) ? null
						: "docs/PROTOCOL.md has no heading \"" + reference.group(3) + "\"";
			}
			int rule = Integer.parseInt(reference.group(1));
			Set<Integer> items = this.rules.get(rule);
			if (items == null) {
				return "docs/PROTOCOL.md has no rule " + rule + " (no heading '### " + rule + ". ...')";
			}
			if (reference.group(2) != null && !items.contains(Integer.parseInt(reference.group(2)))) {
				return "rule " + rule + " of docs/PROTOCOL.md has no item " + reference.group(2) + " (it has " + items
						+ ")";
			}
			return null;
		}

	}

}
