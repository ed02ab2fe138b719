package io.github.kafkaresilience.internal.metrics;

import java.util.function.ToDoubleFunction;

import io.github.kafkaresilience.container.RateLimitSettings;
import io.github.kafkaresilience.internal.container.FairShare;
import io.github.kafkaresilience.internal.container.RetryContainer;
import io.github.kafkaresilience.internal.container.TenantTally;
import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Meters of the tenants and rate limits of the listeners, tagged with the listener's id:
 * per tenant, {@code kafka.resilience.tenant.records} (records handed to the handler),
 * {@code kafka.resilience.tenant.in.flight} (records held in memory),
 * {@code kafka.resilience.tenant.waiting} (records waiting for a worker) and
 * {@code kafka.resilience.tenant.throttled} (time its rate limit held its records back);
 * per listener with a rate limit, {@code kafka.resilience.consumer.rate.limit} (records a
 * second it may hand out here now) and {@code kafka.resilience.consumer.throttled} (time
 * its limit held every record back). The {@code tenant} tag is bounded: the first
 * {@code kafka.resilience.tenants.tagged-tenants} tenants seen have meters of their own,
 * registered as each is first counted, and every later one is counted under
 * {@value TenantTally#OTHER}. Listeners whose records have no tenants get no tenant
 * meters.
 *
 * @since 0.1.0
 */
public class TenantMetrics implements MeterBinder {

	private static final Log logger = LogFactory.getLog(TenantMetrics.class);

	private static final double NANOS_PER_SECOND = 1_000_000_000.0;

	private final ListenerRegistry listeners;

	public TenantMetrics(ListenerRegistry listeners) {
		this.listeners = listeners;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.listeners.onContainer((container) -> bind(registry, container));
	}

	private static void bind(MeterRegistry registry, RetryContainer container) {
		FairShare shared = container.fairShare();
		if (shared == null) {
			return;
		}
		TenantTally tally = shared.tenantTally();
		if (tally != null) {
			bindTenants(registry, container.id(), tally);
		}
		RateLimitSettings limit = shared.rateLimitSettings();
		if (limit == null) {
			return;
		}
		Gauge.builder("kafka.resilience.consumer.rate.limit", shared, FairShare::rateLimit)
			.description("Records a second the listener may hand to its handler on this instance now: its rate limit, "
					+ "or this instance's share of a limit the group shares")
			.tag("listener", container.id())
			.register(registry);
		FunctionCounter
			.builder("kafka.resilience.consumer.throttled", shared, (c) -> c.throttledNanos() / NANOS_PER_SECOND)
			.description("Time the listener's own rate limit held every waiting record back")
			.baseUnit("seconds")
			.tag("listener", container.id())
			.register(registry);
	}

	/**
	 * The meters of {@value TenantTally#OTHER} at once, and those of each tenant counted
	 * on its own as it is first counted (or now, for those counted already).
	 */
	static void bindTenants(MeterRegistry registry, String listener, TenantTally tally) {
		bindTenant(registry, listener, tally, TenantTally.OTHER);
		tally.onTagged((tenant) -> {
			try {
				bindTenant(registry, listener, tally, tenant);
			}
			catch (RuntimeException ex) {
				// called as a record is counted: a meter that cannot be registered must
				// not fail the record
				logger.warn("Could not register the meters of tenant '" + tenant + "' of listener '" + listener + "'",
						ex);
			}
		});
	}

	private static void bindTenant(MeterRegistry registry, String listener, TenantTally tally, String tenant) {
		FunctionCounter.builder("kafka.resilience.tenant.records", tally, (t) -> t.figuresOf(tenant).records())
			.description("Records of a tenant handed to the handler")
			.tag("listener", listener)
			.tag("tenant", tenant)
			.register(registry);
		gauge(registry, listener, tally, tenant, "kafka.resilience.tenant.in.flight",
				"Records of a tenant held in memory, running or waiting; at its share of a partition's bound, "
						+ "its later records there are parked",
				TenantTally.TenantFigures::inFlight);
		gauge(registry, listener, tally, tenant, "kafka.resilience.tenant.waiting",
				"Records of a tenant whose turn it is, waiting for a worker or for a rate limit",
				TenantTally.TenantFigures::waiting);
		FunctionCounter
			.builder("kafka.resilience.tenant.throttled", tally,
					(t) -> t.figuresOf(tenant).throttledNanos() / NANOS_PER_SECOND)
			.description("Time the tenant's rate limit held its waiting records back")
			.baseUnit("seconds")
			.tag("listener", listener)
			.tag("tenant", tenant)
			.register(registry);
	}

	private static void gauge(MeterRegistry registry, String listener, TenantTally tally, String tenant, String name,
			String description, ToDoubleFunction<TenantTally.TenantFigures> value) {
		Gauge.builder(name, tally, (t) -> value.applyAsDouble(t.figuresOf(tenant)))
			.description(description)
			.tag("listener", listener)
			.tag("tenant", tenant)
			.register(registry);
	}

}
