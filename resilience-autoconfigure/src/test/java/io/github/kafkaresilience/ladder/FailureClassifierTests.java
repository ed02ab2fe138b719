package io.github.kafkaresilience.ladder;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;

import io.github.kafkaresilience.PermanentFailureException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Telling permanent failures from transient ones.
 */
class FailureClassifierTests {

	private final FailureClassifier none = new FailureClassifier(List.of());

	private final FailureClassifier configured = new FailureClassifier(
			List.of(IllegalArgumentException.class, IOException.class));

	@Test
	void aPermanentFailureExceptionIsPermanent() {
		assertThat(this.none.isPermanent(new PermanentFailureException("never"))).isTrue();
	}

	@Test
	void aSubclassOfPermanentFailureExceptionIsPermanent() {
		class InvalidOrder extends PermanentFailureException {

			InvalidOrder() {
				super("invalid");
			}

		}
		assertThat(this.none.isPermanent(new InvalidOrder())).isTrue();
	}

	@Test
	void otherExceptionsAreTransientByDefault() {
		assertThat(this.none.isPermanent(new IllegalStateException())).isFalse();
		assertThat(this.none.isPermanent(new IllegalArgumentException())).isFalse();
		assertThat(this.none.isPermanent(new Error())).isFalse();
	}

	@Test
	void aConfiguredTypeIsPermanent() {
		assertThat(this.configured.isPermanent(new IllegalArgumentException())).isTrue();
		assertThat(this.configured.isPermanent(new IOException())).isTrue();
		assertThat(this.configured.isPermanent(new IllegalStateException())).isFalse();
	}

	@Test
	void aSubclassOfAConfiguredTypeIsPermanent() {
		assertThat(this.configured.isPermanent(new NumberFormatException())).isTrue();
		assertThat(this.configured.isPermanent(new FileNotFoundException())).isTrue();
	}

	@Test
	void aSuperclassOfAConfiguredTypeIsNotPermanent() {
		assertThat(this.configured.isPermanent(new RuntimeException())).isFalse();
		assertThat(this.configured.isPermanent(new Exception())).isFalse();
	}

	@Test
	void aPermanentCauseMakesTheFailurePermanent() {
		assertThat(this.none.isPermanent(new RuntimeException(new PermanentFailureException("never")))).isTrue();
		assertThat(this.configured.isPermanent(new UncheckedIOException(new IOException()))).isTrue();
	}

	@Test
	void aPermanentCauseDeepInTheChainMakesTheFailurePermanent() {
		Throwable deep = new CompletionException(
				new IllegalStateException("wrapped", new RuntimeException(new NumberFormatException("x"))));

		assertThat(this.configured.isPermanent(deep)).isTrue();
		assertThat(this.none.isPermanent(deep)).isFalse();
	}

	@Test
	void aPermanentFailureExceptionWithATransientCauseIsPermanent() {
		assertThat(this.none.isPermanent(new PermanentFailureException("never", new IllegalStateException()))).isTrue();
	}

	@Test
	void aConfiguredCheckedTypeIsFoundAsACause() {
		FailureClassifier classifier = new FailureClassifier(List.of(IOException.class));

		assertThat(classifier.isPermanent(new IllegalStateException(new IOException()))).isTrue();
	}

	@Test
	void aCyclicCauseChainIsClassifiedWithoutLoopingForever() {
		// Throwable only refuses a cause equal to itself; longer cycles can be built with
		// initCause.
		RuntimeException outer = new RuntimeException("outer");
		IllegalStateException inner = new IllegalStateException("inner");
		outer.initCause(inner);
		inner.initCause(outer);

		boolean permanent = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> this.configured.isPermanent(outer));

		assertThat(permanent).isFalse();
	}

	@Test
	void aPermanentExceptionInACyclicChainIsFound() {
		RuntimeException outer = new RuntimeException("outer");
		PermanentFailureException inner = new PermanentFailureException("never");
		outer.initCause(inner);
		inner.initCause(outer);

		assertThat(this.none.isPermanent(outer)).isTrue();
	}

	@Test
	void theConfiguredTypesCannotBeChangedAfterwards() {
		List<Class<? extends Throwable>> types = new ArrayList<>();
		FailureClassifier classifier = new FailureClassifier(types);

		types.add(IllegalStateException.class);

		assertThat(classifier.isPermanent(new IllegalStateException())).isFalse();
	}

}
