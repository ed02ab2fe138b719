package io.github.kafkaresilience.internal.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import io.github.kafkaresilience.autoconfigure.ShowValues;
import io.github.kafkaresilience.dlq.DeadLetter;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What of a dead letter a reader is shown: headers that carry credentials never, its
 * value and the application's headers as {@code show-values} says, the library's headers
 * always.
 */
class ValueDisclosureTests {

	private static final ValueDisclosure DEFAULTS = new ValueDisclosure(ShowValues.WHEN_AUTHORIZED,
			ValueDisclosure.DEFAULT_MASKED_HEADERS);

	@Test
	void credentialHeadersAreMaskedWhoeverReads() {
		assertThat(List.of("Authorization", "COOKIE", "set-cookie", "Proxy-Authorization", "x-api-token",
				"X-Auth-Token", "client_secret", "db-password", "X-API-KEY"))
			.allSatisfy((name) -> assertThat(DEFAULTS.isMasked(name)).as(name).isTrue());
		assertThat(List.of("content-type", "traceparent", "x-request-id", "error.message", "original.topic"))
			.allSatisfy((name) -> assertThat(DEFAULTS.isMasked(name)).as(name).isFalse());
		assertThat(DEFAULTS.header("x-api-token", "t0k3n", true)).isEqualTo(ValueDisclosure.MASK);
	}

	@Test
	void theApplicationsHeadersAreShownOnlyWithValuesTheLibrarysAlways() {
		assertThat(DEFAULTS.header("x-request-id", "r-1", true)).isEqualTo("r-1");
		assertThat(DEFAULTS.header("x-request-id", "r-1", false)).isEqualTo(ValueDisclosure.MASK);
		assertThat(DEFAULTS.header("dlq.reason", "exhausted", false)).isEqualTo("exhausted");
		assertThat(DEFAULTS.header("owner.group", "billing", false)).isEqualTo("billing");
	}

	@Test
	void showValuesDecidesWhoIsShownValues() {
		assertThat(DEFAULTS.showsValues(true)).isTrue();
		assertThat(DEFAULTS.showsValues(false)).isFalse();
		ValueDisclosure never = new ValueDisclosure(ShowValues.NEVER, List.of());
		assertThat(never.showsValues(true)).isFalse();
		ValueDisclosure always = new ValueDisclosure(ShowValues.ALWAYS, List.of("x-*"));
		assertThat(always.showsValues(false)).isTrue();
		assertThat(always.isMasked("X-Signature")).isTrue();
		assertThat(always.isMasked("authorization")).as("the list replaces the default").isFalse();
	}

	@Test
	void aDeadLetterInFullHidesItsValueFromAReaderWhoIsNotShownValues() {
		RecordHeaders headers = new RecordHeaders();
		headers.add("Authorization", "Bearer abc".getBytes(StandardCharsets.UTF_8));
		headers.add("x-request-id", "r-1".getBytes(StandardCharsets.UTF_8));
		headers.add("dlq.reason", "exhausted".getBytes(StandardCharsets.UTF_8));
		DeadLetter letter = new DeadLetter("billing.orders.dlq", 0, 7, Instant.EPOCH,
				"k".getBytes(StandardCharsets.UTF_8), "{\"card\":\"4111\"}".getBytes(StandardCharsets.UTF_8), headers,
				null, null, null, null, null, null, null, null, null, "exhausted");

		DeadLetterViews.DeadLetterDetail hidden = DeadLetterViews.detail(letter, DEFAULTS, false);
		assertThat(hidden.value().format()).isEqualTo("hidden");
		assertThat(hidden.value().content()).isNull();
		assertThat(hidden.value().bytes()).isEqualTo(15);
		assertThat(hidden.headers()).extracting(DeadLetterViews.HeaderView::value)
			.containsExactly(ValueDisclosure.MASK, ValueDisclosure.MASK, "exhausted");

		DeadLetterViews.DeadLetterDetail shown = DeadLetterViews.detail(letter, DEFAULTS, true);
		assertThat(shown.value().content()).contains("\"card\" : \"4111\"");
		assertThat(shown.headers()).extracting(DeadLetterViews.HeaderView::value)
			.containsExactly(ValueDisclosure.MASK, "r-1", "exhausted");
	}

}
