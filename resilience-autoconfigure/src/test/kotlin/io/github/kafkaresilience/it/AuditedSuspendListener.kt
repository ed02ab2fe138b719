package io.github.kafkaresilience.it

import io.github.kafkaresilience.OrderedRetryListener
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import org.apache.kafka.clients.consumer.ConsumerRecord
import java.util.function.Consumer

/**
 * The audited application's rules as a Kotlin `suspend` listener: the attempt runs on the
 * coroutines' IO dispatcher, and ends when the function returns or throws.
 */
class AuditedSuspendListener(private val attempt: Consumer<ConsumerRecord<String, String>>) {

    @OrderedRetryListener(id = "audited-\${test.topic}", topics = ["\${test.topic}"])
    suspend fun handle(record: ConsumerRecord<String, String>) {
        withContext(Dispatchers.IO) {
            attempt.accept(record)
        }
    }

}
