package io.github.kafkaresilience.internal.actuate;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import io.github.kafkaresilience.dlq.DeadLetter;
import io.github.kafkaresilience.internal.dlq.DeadLetterBrowser;
import io.github.kafkaresilience.dlq.ScanPosition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Dead letters as the endpoint shows them: a row per dead letter for a list, and one dead
 * letter in full, its headers and its value as JSON, text or hex.
 *
 * @since 0.1.0
 */
public final class DeadLetterViews {

	/** The format of a value the reader is not shown. */
	static final String HIDDEN = "hidden";

	/** The most bytes of a value shown; the rest is cut, and the view says so. */
	static final int MAX_VALUE_BYTES = 64 * 1024;

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	private DeadLetterViews() {
	}

	static DeadLetterPage page(String listener, String topic, String dlqTopic,
			DeadLetterBrowser.Page<DeadLetterRow> page) {
		return new DeadLetterPage(listener, topic, dlqTopic, page.matched(), page.scanned(), page.complete(),
				page.stoppedAt(), page.letters());
	}

	static DeadLetterRow row(DeadLetter letter) {
		return new DeadLetterRow(letter.partition(), letter.offset(), letter.timestamp(), key(letter.key()),
				letter.dlqReason(), letter.errorClass(), letter.errorException(), letter.errorMessage(),
				letter.retryCount(), letter.originalTopic(), letter.originalPartition(), letter.originalOffset(),
				letter.payloadSize());
	}

	/**
	 * One dead letter in full, as a reader is shown it.
	 * @param showValues whether the reader is shown its value and the application's
	 * headers
	 */
	static DeadLetterDetail detail(DeadLetter letter, ValueDisclosure disclosure, boolean showValues) {
		List<HeaderView> headers = new ArrayList<>();
		for (Header header : letter.headers()) {
			headers.add(new HeaderView(header.key(), (header.value() != null)
					? disclosure.header(header.key(), text(header.value()), showValues) : null));
		}
		ValueView value = showValues ? value(letter.value()) : new ValueView(HIDDEN, null, letter.payloadSize(), false);
		return new DeadLetterDetail(row(letter), headers, value);
	}

	static ValueView value(byte @Nullable [] value) {
		if (value == null) {
			return new ValueView("null", null, 0, false);
		}
		boolean cut = value.length > MAX_VALUE_BYTES;
		byte[] shown = cut ? Arrays.copyOf(value, MAX_VALUE_BYTES) : value;
		String text = cut ? null : printable(shown);
		if (text != null) {
			try {
				Object tree = MAPPER.readTree(text);
				if (tree != null && !text.isBlank()) {
					return new ValueView("json", MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(tree),
							value.length, false);
				}
			}
			catch (JacksonException ex) {
				// not JSON: text
			}
			return new ValueView("text", text, value.length, false);
		}
		return new ValueView("hex", HexFormat.of().formatHex(shown), value.length, cut);
	}

	private static @Nullable String key(byte @Nullable [] key) {
		return (key != null) ? ConsoleViews.keyText(Bytes.wrap(key)) : null;
	}

	private static String text(byte[] bytes) {
		String text = printable(bytes);
		return (text != null) ? text : "hex:" + HexFormat.of().formatHex(bytes);
	}

	/**
	 * The bytes as UTF-8 text when they are that and hold no control characters but line
	 * breaks and tabs.
	 */
	private static @Nullable String printable(byte[] bytes) {
		try {
			String text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
			boolean printable = text.chars()
				.noneMatch((c) -> Character.isISOControl(c) && c != '\n' && c != '\r' && c != '\t');
			return printable ? text : null;
		}
		catch (CharacterCodingException ex) {
			return null;
		}
	}

	/**
	 * A page of dead letters.
	 *
	 * @param listener the listener whose ladder it is
	 * @param topic its main topic
	 * @param dlqTopic the dead-letter topic read
	 * @param matched dead letters that matched the filter among the records read
	 * @param scanned records read
	 * @param complete whether every record up to the end was read; {@code false} when the
	 * read stopped at {@code kafka.resilience.console.scan-limit}
	 * @param stoppedAt where it stopped in each partition it did not read to its end
	 * @param deadLetters the newest that matched, newest first
	 */
	public record DeadLetterPage(String listener, String topic, String dlqTopic, long matched, long scanned,
			boolean complete, List<ScanPosition> stoppedAt, List<DeadLetterRow> deadLetters) {
	}

	/**
	 * One dead letter in a list.
	 *
	 * @param partition its partition
	 * @param offset its offset
	 * @param timestamp when it was dead-lettered
	 * @param key its key (text, or {@code base64:...})
	 * @param reason {@code dlq.reason}
	 * @param errorClass {@code error.class}
	 * @param exception {@code error.exception}
	 * @param message {@code error.message}
	 * @param retryCount {@code retry.count}
	 * @param originalTopic where it was born
	 * @param originalPartition its partition there
	 * @param originalOffset its offset there
	 * @param valueBytes the size of its value
	 */
	public record DeadLetterRow(int partition, long offset, Instant timestamp, @Nullable String key,
			@Nullable String reason, @Nullable String errorClass, @Nullable String exception, @Nullable String message,
			@Nullable Integer retryCount, @Nullable String originalTopic, @Nullable Integer originalPartition,
			@Nullable Long originalOffset, int valueBytes) {
	}

	/**
	 * One dead letter in full.
	 *
	 * @param summary what a list shows of it
	 * @param headers every header, in order (text, or {@code hex:...})
	 * @param value its value
	 */
	public record DeadLetterDetail(DeadLetterRow summary, List<HeaderView> headers, ValueView value) {
	}

	/**
	 * A header: its name and value (text, or {@code hex:...}; {@code null} for a null
	 * value; {@value ValueDisclosure#MASK} when masked or hidden).
	 */
	public record HeaderView(String name, @Nullable String value) {
	}

	/**
	 * A value as shown.
	 *
	 * @param format {@code json} (pretty printed), {@code text}, {@code hex},
	 * {@code null}, or {@code hidden} when the reader is not shown values
	 * ({@code kafka.resilience.console.show-values})
	 * @param content the value in that format; {@code null} when hidden
	 * @param bytes its size
	 * @param truncated whether only its first 64 KiB are shown
	 */
	public record ValueView(String format, @Nullable String content, int bytes, boolean truncated) {
	}

}
