package io.github.kafkaresilience.internal.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.kafkaresilience.internal.container.TenantTally;
import io.github.kafkaresilience.internal.container.TestTenantTally;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The meters of a listener's tenants, read from a real {@link TenantTally}: each tenant
 * counted on its own gets its meters as it is first counted, whether before or after the
 * meters are bound, and the tenants past the tagged ones are counted under {@code other},
 * so the {@code tenant} tag never has more values than that.
 */
class TenantMetricsTests {

	private static final List<String> TENANT_METERS = List.of("kafka.resilience.tenant.records",
			"kafka.resilience.tenant.in.flight", "kafka.resilience.tenant.waiting",
			"kafka.resilience.tenant.throttled");

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	@Test
	void aTenantSeenAfterTheMetersWereBoundGetsItsOwnAndTheTenantsPastTheTaggedOnesAreCountedUnderOther() {
		TenantTally tally = new TenantTally(2);
		TenantMetrics.bindTenants(this.registry, "orders", tally);
		assertThat(tenants()).as("before any record").containsExactly(TenantTally.OTHER);
		assertThat(this.registry.getMeters()).hasSize(TENANT_METERS.size());

		new TestTenantTally(tally).handedOut("acme", 3)
			.inFlight("acme", 2)
			.waiting("acme", 1)
			.throttled("acme", 1_500_000_000L)
			.handedOut("globex", 1)
			.inFlight("globex", 1)
			// past the two tagged tenants
			.handedOut("initech", 4)
			.inFlight("initech", 3)
			.waiting("initech", 2)
			.handedOut("umbrella", 1)
			.throttled("umbrella", 250_000_000L);

		assertThat(tenants()).containsExactlyInAnyOrder("acme", "globex", TenantTally.OTHER);
		assertThat(this.registry.getMeters()).hasSize(3 * TENANT_METERS.size());
		assertThat(this.registry.getMeters())
			.allSatisfy((meter) -> assertThat(meter.getId().getTag("listener")).isEqualTo("orders"));
		assertFigures("acme", 3, 2, 1, 1.5);
		assertFigures("globex", 1, 1, 0, 0);
		assertFigures(TenantTally.OTHER, 5, 3, 2, 0.25);

		// they follow the figures
		new TestTenantTally(tally).inFlight("acme", -2).waiting("acme", -1).handedOut("acme", 1);
		assertFigures("acme", 4, 0, 0, 1.5);
	}

	@Test
	void tenantsCountedBeforeTheMetersWereBoundGetTheirsWhenBoundToEachRegistry() {
		TenantTally tally = new TenantTally(10);
		new TestTenantTally(tally).handedOut("acme", 2).inFlight("globex", 1);
		TenantMetrics.bindTenants(this.registry, "orders", tally);
		SimpleMeterRegistry second = new SimpleMeterRegistry();
		TenantMetrics.bindTenants(second, "orders", tally);
		new TestTenantTally(tally).handedOut("initech", 1);

		assertThat(tenants()).containsExactlyInAnyOrder("acme", "globex", "initech", TenantTally.OTHER);
		assertFigures("acme", 2, 0, 0, 0);
		assertFigures("globex", 0, 1, 0, 0);
		assertThat(second.find("kafka.resilience.tenant.records").tag("tenant", "initech").functionCounter().count())
			.isEqualTo(1);
		assertThat(second.getMeters()).hasSize(4 * TENANT_METERS.size());
	}

	@Test
	void withNoTaggedTenantsEveryTenantIsOther() {
		TenantTally tally = new TenantTally(0);
		TenantMetrics.bindTenants(this.registry, "orders", tally);
		new TestTenantTally(tally).handedOut("acme", 2).handedOut("globex", 1);
		assertThat(tenants()).containsExactly(TenantTally.OTHER);
		assertFigures(TenantTally.OTHER, 3, 0, 0, 0);
	}

	@Test
	void tenantsFirstCountedOnManyThreadsWhileTheMetersAreBoundHaveTheirsAndNoRecordIsLost() throws Exception {
		int tagged = 10;
		int tenants = 60;
		int threads = 6;
		TenantTally tally = new TenantTally(tagged);
		TestTenantTally counting = new TestTenantTally(tally);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch go = new CountDownLatch(1);
		try {
			List<Future<?>> runs = new ArrayList<>();
			for (int thread = 0; thread < threads; thread++) {
				int first = thread;
				runs.add(pool.submit(() -> {
					go.await();
					for (int tenant = first; tenant < tenants + first; tenant++) {
						counting.handedOut("t" + (tenant % tenants), 1);
					}
					return null;
				}));
			}
			go.countDown();
			TenantMetrics.bindTenants(this.registry, "orders", tally);
			for (Future<?> run : runs) {
				run.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		Set<String> withMeters = tenants();
		assertThat(withMeters).contains(TenantTally.OTHER).hasSizeLessThanOrEqualTo(tagged + 1);
		tally.figures()
			.stream()
			.filter((figures) -> !figures.tenant().equals(TenantTally.OTHER))
			.forEach((figures) -> assertThat(withMeters).as("tenants counted on their own").contains(figures.tenant()));
		double counted = this.registry.find("kafka.resilience.tenant.records")
			.functionCounters()
			.stream()
			.mapToDouble(FunctionCounter::count)
			.sum();
		assertThat(counted).isEqualTo(threads * tenants);
	}

	private Set<String> tenants() {
		return this.registry.getMeters()
			.stream()
			.map(Meter::getId)
			.map((id) -> id.getTag("tenant"))
			.collect(Collectors.toSet());
	}

	private void assertFigures(String tenant, double records, double inFlight, double waiting, double throttled) {
		assertThat(this.registry.find("kafka.resilience.tenant.records").tag("tenant", tenant).functionCounter())
			.extracting(FunctionCounter::count)
			.as("records of " + tenant)
			.isEqualTo(records);
		assertThat(this.registry.find("kafka.resilience.tenant.in.flight").tag("tenant", tenant).gauge())
			.extracting(Gauge::value)
			.as("in flight of " + tenant)
			.isEqualTo(inFlight);
		assertThat(this.registry.find("kafka.resilience.tenant.waiting").tag("tenant", tenant).gauge())
			.extracting(Gauge::value)
			.as("waiting of " + tenant)
			.isEqualTo(waiting);
		assertThat(this.registry.find("kafka.resilience.tenant.throttled").tag("tenant", tenant).functionCounter())
			.extracting(FunctionCounter::count)
			.as("throttled of " + tenant)
			.isEqualTo(throttled);
		assertThat(this.registry.find("kafka.resilience.tenant.throttled").tag("tenant", tenant).functionCounter())
			.extracting((counter) -> counter.getId().getBaseUnit())
			.isEqualTo("seconds");
	}

}
