package io.github.kafkaresilience.it

import io.github.kafkaresilience.OrderedRetryListener
import kotlinx.coroutines.delay
import org.apache.kafka.clients.consumer.ConsumerRecord

/**
 * A Kotlin `suspend` batch listener: its batch's outcomes are known when the function returns
 * or throws, naming the record that failed.
 */
class SuspendBatchListener {

    @OrderedRetryListener(id = "async-\${test.topic}", topics = ["\${test.topic}"], batch = "true")
    suspend fun handle(records: List<ConsumerRecord<String, String>>) {
        val keys = AsyncListenerTests.calledBatch(records)
        delay(AsyncListenerTests.completeAfterMillis)
        AsyncListenerTests.handleBatch(records, keys)
    }

}
