package com.example.orders;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * Once the application is up, sends {@value #KEYS} keys times {@value #ORDERS_PER_KEY} orders
 * to the {@code orders} topic, waits until every one is handled or dead-lettered, prints a
 * summary and, unless {@code sample.exit-when-done=false}, ends the JVM with exit code 0 when
 * every key was handled in order and 1 otherwise.
 * <p>
 * It stays off when the application runs the {@code replay} command.
 */
@Component
@ConditionalOnExpression("'${kafka.resilience.command:}'.isEmpty()")
public class LoadGenerator implements ApplicationRunner, DisposableBean {

	static final int KEYS = 6;

	static final int ORDERS_PER_KEY = 10;

	private final KafkaTemplate<String, String> template;

	private final KafkaProperties kafkaProperties;

	private final DemoTracker tracker;

	private final ConfigurableApplicationContext context;

	private final boolean exitWhenDone;

	private final Duration timeout;

	private volatile boolean running = true;

	private volatile Thread monitor;

	public LoadGenerator(KafkaTemplate<String, String> template, KafkaProperties kafkaProperties,
			DemoTracker tracker, ConfigurableApplicationContext context,
			@Value("${sample.exit-when-done:true}") boolean exitWhenDone,
			@Value("${sample.timeout:90s}") Duration timeout) {
		this.template = template;
		this.kafkaProperties = kafkaProperties;
		this.tracker = tracker;
		this.context = context;
		this.exitWhenDone = exitWhenDone;
		this.timeout = timeout;
	}

	@Override
	public void run(ApplicationArguments args) throws Exception {
		DeadLetterCounter deadLetters = new DeadLetterCounter(this.kafkaProperties.buildConsumerProperties(),
				OrdersSampleApplication.DEAD_LETTER_TOPIC);
		try {
			deadLetters.markStart();
			send();
		}
		catch (Exception ex) {
			deadLetters.close();
			throw ex;
		}
		Thread thread = new Thread(() -> watch(deadLetters), "orders-sample-monitor");
		this.monitor = thread;
		thread.start();
	}

	private void send() throws Exception {
		List<CompletableFuture<?>> sends = new ArrayList<>();
		// Round robin over the keys, so the keys interleave on the partitions.
		for (int sequence = 1; sequence <= ORDERS_PER_KEY; sequence++) {
			for (int k = 1; k <= KEYS; k++) {
				String key = "k" + k;
				String order = DemoTracker.order(key, sequence);
				this.tracker.sent(order);
				sends.add(this.template.send(OrdersSampleApplication.TOPIC, key, order));
			}
		}
		CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		System.out.printf("[sample] sent %d orders over %d keys to '%s'; %s fails twice then succeeds, "
				+ "%s is rejected for good%n", sends.size(), KEYS, OrdersSampleApplication.TOPIC, OrderHandler.FLAKY,
				OrderHandler.POISON);
	}

	private void watch(DeadLetterCounter deadLetters) {
		DemoTracker.Summary summary;
		try (deadLetters) {
			long deadline = System.nanoTime() + this.timeout.toNanos();
			String lastProgress = "";
			long lastPrinted = 0;
			boolean timedOut = false;
			while (this.running && !this.tracker.allAccountedFor(deadLetters.count())) {
				if (System.nanoTime() - deadline > 0) {
					timedOut = true;
					break;
				}
				deadLetters.poll(Duration.ofMillis(500));
				String progress = String.format("[sample] progress: %d of %d handled, %d dead-lettered",
						this.tracker.handledCount(), this.tracker.sentCount(), deadLetters.count());
				if (!progress.equals(lastProgress) && System.nanoTime() - lastPrinted > TimeUnit.SECONDS.toNanos(1)) {
					System.out.println(progress);
					lastProgress = progress;
					lastPrinted = System.nanoTime();
				}
			}
			if (!this.running) {
				return;
			}
			summary = this.tracker.summarize(deadLetters.values(), Set.of(OrderHandler.POISON), timedOut);
		}
		catch (RuntimeException ex) {
			if (!this.running) {
				return;
			}
			System.out.println("[sample] could not finish the run: " + ex);
			summary = new DemoTracker.Summary(false, List.of("result: FAILED, " + ex));
		}
		System.out.println("[sample] ---------------- summary ----------------");
		summary.lines().forEach((line) -> System.out.println("[sample] " + line));
		this.tracker.finish(summary);
		if (this.exitWhenDone) {
			int exitCode = summary.exitCode();
			System.exit(SpringApplication.exit(this.context, () -> exitCode));
		}
	}

	@Override
	public void destroy() throws InterruptedException {
		this.running = false;
		Thread thread = this.monitor;
		if (thread != null && thread != Thread.currentThread()) {
			thread.join(TimeUnit.SECONDS.toMillis(5));
		}
	}

}
