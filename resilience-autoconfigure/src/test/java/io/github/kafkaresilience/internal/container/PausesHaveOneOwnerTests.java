package io.github.kafkaresilience.internal.container;

import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One class pauses and resumes the container's consumers:
 * {@link PauseRequest.Consumption}, the poll loop's settling. Every other class says why
 * a partition should be paused (its barrier, its bound, a stop, the application's pause,
 * an outage hold) and leaves the calls to it.
 */
class PausesHaveOneOwnerTests {

	private static final Pattern PAUSE_OR_RESUME = Pattern
		.compile("\\b[cC]onsumer(\\(\\))?\\s*\\.\\s*(pause|resume)\\(");

	@Test
	void onlyThePollLoopsSettlingPausesOrResumesAConsumer() {
		assertThat(ContainerSources.filesMatching(PAUSE_OR_RESUME)).containsExactly("PauseRequest.java");
	}

}
