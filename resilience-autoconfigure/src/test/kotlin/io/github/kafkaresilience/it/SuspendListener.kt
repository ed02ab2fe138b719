package io.github.kafkaresilience.it

import io.github.kafkaresilience.OrderedRetryListener
import kotlinx.coroutines.delay
import org.apache.kafka.clients.consumer.ConsumerRecord

/**
 * A Kotlin `suspend` listener: its attempt ends when the function returns or throws, after
 * suspending without holding a thread.
 */
class SuspendListener {

    @OrderedRetryListener(id = "async-\${test.topic}", topics = ["\${test.topic}"])
    suspend fun handle(record: ConsumerRecord<String, String>) {
        val key = AsyncListenerTests.called(record)
        delay(AsyncListenerTests.completeAfterMillis)
        AsyncListenerTests.handle(record, key)
    }

}
