package io.github.kafkaresilience.internal.container;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** The sources of the container's packages, for tests that check who calls what. */
final class ContainerSources {

	private static final Path CONTAINER = Path.of("src/main/java/io/github/kafkaresilience/internal/container");

	private ContainerSources() {
	}

	/**
	 * The names of the container's source files (its sub-packages' too) in which
	 * {@code pattern} is found.
	 */
	static List<String> filesMatching(Pattern pattern) {
		try (Stream<Path> files = Files.walk(CONTAINER)) {
			return files.filter((file) -> file.toString().endsWith(".java"))
				.filter((file) -> pattern.matcher(read(file)).find())
				.map((file) -> file.getFileName().toString())
				.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
