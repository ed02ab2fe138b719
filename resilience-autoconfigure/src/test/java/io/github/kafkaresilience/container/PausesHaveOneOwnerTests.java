package io.github.kafkaresilience.container;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One class pauses and resumes the container's consumers: {@link PauseRequest.Consumption}, the
 * poll loop's settling. Every other class says why a partition should be paused (its barrier,
 * its bound, a stop, the application's pause, an outage hold) and leaves the calls to it.
 */
class PausesHaveOneOwnerTests {

	private static final Pattern PAUSE_OR_RESUME = Pattern.compile("\\b[cC]onsumer(\\(\\))?\\s*\\.\\s*(pause|resume)\\(");

	@Test
	void onlyThePollLoopsSettlingPausesOrResumesAConsumer() throws IOException {
		Path container = Path.of("src/main/java/io/github/kafkaresilience/container");
		List<String> callers;
		try (Stream<Path> files = Files.list(container)) {
			callers = files.filter((file) -> file.toString().endsWith(".java")).filter((file) -> {
				try {
					return PAUSE_OR_RESUME.matcher(Files.readString(file)).find();
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
			}).map((file) -> file.getFileName().toString()).toList();
		}
		assertThat(callers).containsExactly("PauseRequest.java");
	}

}
