package io.github.kafkaresilience.internal.listener;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

import org.springframework.core.log.LogAccessor;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.kafka.support.serializer.SerializationUtils;

/**
 * Reads the failure an {@link ErrorHandlingDeserializer} reports instead of throwing:
 * when its delegate fails it returns {@code null} (or what its failure function gives)
 * and puts the exception, serialized, in the
 * {@link SerializationUtils#KEY_DESERIALIZER_EXCEPTION_HEADER key} or
 * {@link SerializationUtils#VALUE_DESERIALIZER_EXCEPTION_HEADER value} exception header
 * of the headers it was given. Such a record could not be deserialized, however the
 * method would take its value.
 *
 * @since 0.1.0
 */
final class DeserializerExceptionHeaders {

	private static final LogAccessor logger = new LogAccessor(DeserializerExceptionHeaders.class);

	private DeserializerExceptionHeaders() {
	}

	/**
	 * The failure the deserializers of a record reported in its headers, the key's first,
	 * or {@code null}. Only a header they added counts: one the record arrived with was
	 * written by someone else (an {@link ErrorHandlingDeserializer} removes it before it
	 * deserializes, and spring-kafka does not trust it either).
	 * @param arrived the headers the record arrived with
	 * @param deserialized the copy of them the deserializers were given, as they left it
	 * @param key the raw key
	 * @param value the raw value
	 * @return the failure, a {@link DeserializationException} with the deserializer's
	 * exception as its cause, or {@code null}
	 */
	static @Nullable DeserializationException reported(Headers arrived, Headers deserialized, byte @Nullable [] key,
			byte @Nullable [] value) {
		DeserializationException keyFailure = reported(arrived, deserialized,
				SerializationUtils.KEY_DESERIALIZER_EXCEPTION_HEADER, key, true);
		DeserializationException valueFailure = reported(arrived, deserialized,
				SerializationUtils.VALUE_DESERIALIZER_EXCEPTION_HEADER, value, false);
		if (keyFailure != null && valueFailure != null) {
			keyFailure.addSuppressed(valueFailure);
		}
		return (keyFailure != null) ? keyFailure : valueFailure;
	}

	private static @Nullable DeserializationException reported(Headers arrived, Headers deserialized, String name,
			byte @Nullable [] data, boolean isKey) {
		Header header = deserialized.lastHeader(name);
		if (header == null || arrivedWith(arrived, header)) {
			return null;
		}
		String part = isKey ? "key" : "value";
		DeserializationException decoded;
		try {
			decoded = SerializationUtils.byteArrayToDeserializationException(logger, header);
		}
		catch (RuntimeException ex) {
			return unreadable(name, part, data, isKey, ex);
		}
		if (decoded == null) {
			return unreadable(name, part, data, isKey, null);
		}
		// its own message is always "failed to deserialize": say what failed and why
		Throwable cause = decoded.getCause();
		return exception("failed to deserialize the " + part + ((cause != null) ? ": " + cause : ""), decoded.getData(),
				isKey, cause);
	}

	private static boolean arrivedWith(Headers arrived, Header header) {
		for (Header original : arrived.headers(header.key())) {
			if (original == header) {
				return true;
			}
		}
		return false;
	}

	private static DeserializationException unreadable(String name, String part, byte @Nullable [] data, boolean isKey,
			@Nullable RuntimeException cause) {
		return exception("The " + part + " deserializer reported a failure in header '" + name
				+ "', which cannot be read" + ((cause != null) ? " (" + cause.getMessage() + ")" : "")
				+ "; the record is taken as one whose " + part + " cannot be deserialized", data, isKey, cause);
	}

	// spring-kafka declares the data and the cause non-null, yet it stores both as given
	// and a record's bytes, as a Throwable's cause, may be null
	@SuppressWarnings("NullAway")
	private static DeserializationException exception(String message, byte @Nullable [] data, boolean isKey,
			@Nullable Throwable cause) {
		return new DeserializationException(message, data, isKey, cause);
	}

}
