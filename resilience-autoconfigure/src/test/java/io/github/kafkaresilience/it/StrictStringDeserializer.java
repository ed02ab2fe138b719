package io.github.kafkaresilience.it;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * A string deserializer that refuses values starting with {@code POISON}, standing in for
 * a record no deserializer can read.
 */
public class StrictStringDeserializer implements Deserializer<String> {

	@Override
	public String deserialize(String topic, byte[] data) {
		String text = new String(data, StandardCharsets.UTF_8);
		if (text.startsWith("POISON")) {
			throw new SerializationException("not a valid record: " + text);
		}
		return text;
	}

}
