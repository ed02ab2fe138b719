package io.github.kafkaresilience.internal.listener;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.jspecify.annotations.Nullable;

import io.micrometer.observation.Observation;

import org.springframework.beans.BeanUtils;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.support.SendResult;
import org.springframework.kafka.support.converter.RecordMessageConverter;
import org.springframework.util.ClassUtils;

/**
 * The replies of a {@code @SendTo} listener method, made as spring-kafka makes a
 * {@code @KafkaListener}'s: spring-kafka's listener adapter builds them (the reply topic
 * from {@code @SendTo} or the request's {@code KafkaHeaders.REPLY_TOPIC}, the correlation
 * id, the reply partition and the key, a {@code Message} the method returned) and sends
 * them through this template, which only takes them down; they are serialized with the
 * application's producer factory's serializers and sent by the library, as one more write
 * of the record's step, so that in {@code transaction} mode they commit with the record's
 * offset.
 */
final class Replies extends KafkaTemplate<Object, Object> {

	private final ThreadLocal<@Nullable List<ProducerRecord<Object, Object>>> taken = new ThreadLocal<>();

	private final Serializer<Object> keySerializer;

	private final Serializer<Object> valueSerializer;

	/**
	 * @param producerFactory the application's producer factory: its serializers
	 * serialize the replies; it makes no producer here
	 * @param messageConverter converts a {@code Message} the method returned into a
	 * record
	 */
	@SuppressWarnings({ "this-escape", "unchecked" })
	Replies(ProducerFactory<?, ?> producerFactory, RecordMessageConverter messageConverter) {
		super((ProducerFactory<Object, Object>) producerFactory);
		setMessageConverter(messageConverter);
		this.keySerializer = serializer(producerFactory, true);
		this.valueSerializer = serializer(producerFactory, false);
	}

	/**
	 * The records {@code reply} sends through this template, serialized.
	 * @param reply sends the replies, through spring-kafka's adapter
	 * @return the serialized replies, in the order sent
	 * @throws RuntimeException what making or serializing a reply threw
	 */
	List<ProducerRecord<byte[], byte[]>> take(Runnable reply) {
		List<ProducerRecord<Object, Object>> records = new ArrayList<>();
		this.taken.set(records);
		try {
			reply.run();
		}
		finally {
			this.taken.remove();
		}
		List<ProducerRecord<byte[], byte[]>> serialized = new ArrayList<>(records.size());
		for (ProducerRecord<Object, Object> record : records) {
			byte[] key = (record.key() != null)
					? this.keySerializer.serialize(record.topic(), record.headers(), record.key()) : null;
			byte[] value = (record.value() != null)
					? this.valueSerializer.serialize(record.topic(), record.headers(), record.value()) : null;
			serialized.add(new ProducerRecord<>(record.topic(), record.partition(), record.timestamp(), key, value,
					record.headers()));
		}
		return serialized;
	}

	/** Takes a reply down instead of sending it. */
	@Override
	protected CompletableFuture<SendResult<Object, Object>> doSend(ProducerRecord<Object, Object> record,
			Observation observation) {
		List<ProducerRecord<Object, Object>> records = this.taken.get();
		if (records == null) {
			throw new IllegalStateException("Replies are sent as part of a record's step only");
		}
		records.add(record);
		observation.stop();
		return new CompletableFuture<>(); // the library sends it; nothing waits for this
	}

	/**
	 * The application's key or value serializer: the one its producer factory supplies,
	 * or else one of the configured class (a {@link ByteArraySerializer} when none is
	 * configured), configured with the factory's properties.
	 */
	@SuppressWarnings("unchecked")
	private static Serializer<Object> serializer(ProducerFactory<?, ?> factory, boolean isKey) {
		Supplier<? extends @Nullable Serializer<?>> supplier = isKey ? factory.getKeySerializerSupplier()
				: factory.getValueSerializerSupplier();
		Serializer<?> supplied = (supplier != null) ? supplier.get() : null;
		if (supplied != null) {
			return (Serializer<Object>) supplied;
		}
		Map<String, Object> config = factory.getConfigurationProperties();
		Object configured = config
			.get(isKey ? ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG : ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
		Serializer<Object> serializer;
		if (configured == null) {
			serializer = (Serializer<Object>) (Serializer<?>) new ByteArraySerializer();
		}
		else if (configured instanceof Serializer<?> instance) {
			serializer = (Serializer<Object>) instance;
		}
		else {
			Class<?> type = (configured instanceof Class<?> cls) ? cls
					: ClassUtils.resolveClassName(configured.toString().trim(), Replies.class.getClassLoader());
			serializer = (Serializer<Object>) BeanUtils.instantiateClass(type);
		}
		serializer.configure(config, isKey);
		return serializer;
	}

}
