package com.example.payments;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * Once the application is up, sends {@code sample.payments-per-customer} (20) payments
 * for each of {@code sample.customers} (12) customers to the {@code payments} topic, at
 * {@code sample.rate} (40) a second, round robin over the customers. It then prints
 * progress every second until every payment is charged or dead-lettered and booked in the
 * ledger, prints the summary and, unless {@code sample.exit-when-done=false}, ends the
 * JVM: exit code 0 when every customer's payments were charged and booked in order and
 * every payment is accounted for, 1 otherwise.
 * <p>
 * It stays off when the application runs the {@code replay} command.
 */
@Component
@ConditionalOnExpression("'${kafka.resilience.command:}'.isEmpty()")
public class LoadGenerator implements ApplicationRunner, DisposableBean {

	private final KafkaTemplate<String, String> template;

	private final ConsumerFactory<?, ?> consumerFactory;

	private final DemoTracker tracker;

	private final PaymentProvider provider;

	private final Ledger ledger;

	private final ConfigurableApplicationContext context;

	private final Settings settings;

	private volatile boolean running = true;

	private volatile Thread monitor;

	/**
	 * What the load generator does.
	 *
	 * @param customers how many customers pay
	 * @param paymentsPerCustomer how many payments each one makes
	 * @param rate payments sent per second
	 * @param exitWhenDone whether to end the JVM after the summary
	 * @param timeout how long to wait for every payment to be accounted for
	 */
	record Settings(int customers, int paymentsPerCustomer, double rate, boolean exitWhenDone, Duration timeout) {
	}

	public LoadGenerator(KafkaTemplate<String, String> template, ConsumerFactory<?, ?> consumerFactory,
			DemoTracker tracker, PaymentProvider provider, Ledger ledger, ConfigurableApplicationContext context,
			@Value("${sample.customers:12}") int customers,
			@Value("${sample.payments-per-customer:20}") int paymentsPerCustomer,
			@Value("${sample.rate:40}") double rate, @Value("${sample.exit-when-done:true}") boolean exitWhenDone,
			@Value("${sample.timeout:120s}") Duration timeout) {
		this.template = template;
		this.consumerFactory = consumerFactory;
		this.tracker = tracker;
		this.provider = provider;
		this.ledger = ledger;
		this.context = context;
		this.settings = new Settings(customers, paymentsPerCustomer, rate, exitWhenDone, timeout);
	}

	@Override
	public void run(ApplicationArguments args) {
		// the consumer factory's settings rather than spring.kafka.*: they hold the
		// brokers of a
		// @ServiceConnection too (TestPaymentsApplication)
		DeadLetterCounter deadLetters = new DeadLetterCounter(this.consumerFactory.getConfigurationProperties(),
				PaymentsSampleApplication.DEAD_LETTER_TOPIC);
		deadLetters.markStart();
		System.out.printf(
				"[sample] sending %d payments for %d customers at %.0f a second. The provider is down "
						+ "for %s at first, never answers for %s and declines %s%n",
				this.settings.customers() * this.settings.paymentsPerCustomer(), this.settings.customers(),
				this.settings.rate(), PaymentProvider.OUTAGE_CUSTOMERS.stream().sorted().toList(),
				PaymentProvider.TIMEOUT_PAYMENT, PaymentProvider.DECLINED_PAYMENTS.stream().sorted().toList());
		Thread thread = new Thread(() -> {
			try {
				send();
				watch(deadLetters);
			}
			catch (Exception ex) {
				deadLetters.close();
				fail(ex);
			}
		}, "payments-sample-load");
		this.monitor = thread;
		thread.start();
	}

	private void send() throws Exception {
		List<CompletableFuture<?>> sends = new ArrayList<>();
		long start = System.nanoTime();
		long nanosPerPayment = (long) (1e9 / this.settings.rate());
		this.provider.start();
		int sent = 0;
		for (int sequence = 1; sequence <= this.settings.paymentsPerCustomer() && this.running; sequence++) {
			for (int c = 1; c <= this.settings.customers(); c++) {
				String customer = String.format("c%02d", c);
				String payment = DemoTracker.payment(customer, sequence, 500 + (c * 731 + sequence * 97) % 9500);
				// pacing the load, not waiting for a result
				long due = start + sent * nanosPerPayment;
				long wait = due - System.nanoTime();
				if (wait > 0) {
					TimeUnit.NANOSECONDS.sleep(wait);
				}
				this.tracker.sent(DemoTracker.paymentId(payment));
				sends.add(this.template.send(PaymentsSampleApplication.TOPIC, customer, payment));
				sent++;
			}
		}
		CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		System.out.printf("[sample] sent %d payments to '%s' in %.1f s%n", sends.size(),
				PaymentsSampleApplication.TOPIC, (System.nanoTime() - start) / 1e9);
	}

	private void watch(DeadLetterCounter deadLetters) {
		DemoTracker.Summary summary;
		try (deadLetters) {
			long deadline = System.nanoTime() + this.settings.timeout().toNanos();
			String lastProgress = "";
			long lastPrinted = 0;
			boolean timedOut = false;
			while (this.running && !(this.tracker.allAccountedFor(deadLetters.count()) && ledgerComplete())) {
				if (System.nanoTime() - deadline > 0) {
					timedOut = true;
					break;
				}
				deadLetters.poll(Duration.ofMillis(500));
				String progress = String.format(
						"[sample] progress: %d of %d payments charged, %d dead-lettered, %d booked",
						this.tracker.chargedCount(), this.tracker.sentCount(), deadLetters.count(),
						this.ledger.bookedOf(this.tracker.sentPayments()));
				if (!progress.equals(lastProgress) && System.nanoTime() - lastPrinted > TimeUnit.SECONDS.toNanos(1)) {
					System.out.println(progress);
					lastProgress = progress;
					lastPrinted = System.nanoTime();
				}
			}
			if (!this.running) {
				return;
			}
			summary = this.tracker.summarize(deadLetters.reasons(), expectedDeadLetters(), this.ledger, timedOut);
		}
		catch (RuntimeException ex) {
			fail(ex);
			return;
		}
		report(summary);
	}

	/** Whether the ledger booked every payment sent. */
	private boolean ledgerComplete() {
		return this.ledger.bookedOf(this.tracker.sentPayments()) >= this.tracker.sentCount();
	}

	private static Map<String, String> expectedDeadLetters() {
		Map<String, String> expected = new TreeMap<>();
		expected.put(PaymentProvider.TIMEOUT_PAYMENT, "exhausted");
		PaymentProvider.DECLINED_PAYMENTS.forEach((payment) -> expected.put(payment, "permanent"));
		return expected;
	}

	private void fail(Exception ex) {
		if (!this.running) {
			return;
		}
		System.out.println("[sample] could not finish the run: " + ex);
		report(new DemoTracker.Summary(false, List.of("result:        FAILED, " + ex)));
	}

	private void report(DemoTracker.Summary summary) {
		System.out.println("[sample] ---------------- summary ----------------");
		summary.lines().forEach((line) -> System.out.println("[sample] " + line));
		this.tracker.finish(summary);
		if (this.settings.exitWhenDone()) {
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
