package io.github.kafkaresilience.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.kafkaresilience.container.BatchSettings;
import io.github.kafkaresilience.container.ContainerSettings;
import io.github.kafkaresilience.internal.container.DualWriteStrategy;
import io.github.kafkaresilience.container.ResilienceObserver;
import io.github.kafkaresilience.ladder.DualWrite;
import io.github.kafkaresilience.ladder.FailureClassifier;
import io.github.kafkaresilience.internal.ladder.AttemptObservation;
import io.github.kafkaresilience.internal.listener.AttemptObservationFactory;
import io.github.kafkaresilience.internal.listener.ContainerAssemblies;
import io.github.kafkaresilience.internal.listener.ContainerAssembly;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;
import io.github.kafkaresilience.listener.TenantResolver;
import io.github.kafkaresilience.listener.OrderedRetryContainerCustomizer;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;
import io.github.kafkaresilience.listener.OrderedRetryContainerFactory.ReaperSettings;
import org.apache.kafka.clients.admin.Admin;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;

/**
 * Configures an {@link OrderedRetryContainerFactory} from {@code kafka.resilience.*} and
 * the application's beans, as Spring Boot's
 * {@code ConcurrentKafkaListenerContainerFactoryConfigurer} does for spring-kafka's
 * factory. An application that wants a second factory (another dual-write mode, other
 * bounds or delays) configures it with this and changes what differs.
 *
 * @since 0.1.0
 */
public class OrderedRetryContainerFactoryConfigurer {

	private final ResilienceProperties properties;

	private final ContainerAssembly.Engine engine;

	private final ContainerAssemblies assemblies;

	private final boolean virtualThreads;

	private FailureClassifier classifier = new FailureClassifier(List.of());

	private ResilienceObserver observer = ResilienceObserver.NONE;

	private @Nullable AttemptObservationFactory attemptObservations;

	private @Nullable ConsumerAwareRebalanceListener rebalanceListener;

	private @Nullable Duration idleEventInterval;

	private Map<String, Object> adminConfig = Map.of();

	private List<OrderedRetryContainerCustomizer> customizers = List.of();

	private @Nullable OrderedRetryComponentFactory componentFactory;

	private @Nullable TenantResolver tenantResolver;

	/**
	 * @param properties the library's properties
	 * @param engine what every container shares
	 * @param virtualThreads whether workers are virtual threads: as
	 * {@code kafka.resilience.consumer.virtual-threads} says, else as
	 * {@code spring.threads.virtual.enabled} says on Java 21 or later
	 * @param assemblies where each configured factory's assembly is registered
	 */
	OrderedRetryContainerFactoryConfigurer(ResilienceProperties properties, ContainerAssembly.Engine engine,
			boolean virtualThreads, ContainerAssemblies assemblies) {
		this.properties = properties;
		this.engine = engine;
		this.assemblies = assemblies;
		this.virtualThreads = virtualThreads;
	}

	void setClassifier(FailureClassifier classifier) {
		this.classifier = classifier;
	}

	void setObserver(ResilienceObserver observer) {
		this.observer = observer;
	}

	void setAttemptObservations(@Nullable AttemptObservationFactory attemptObservations) {
		this.attemptObservations = attemptObservations;
	}

	void setRebalanceListener(@Nullable ConsumerAwareRebalanceListener rebalanceListener) {
		this.rebalanceListener = rebalanceListener;
	}

	void setIdleEventInterval(@Nullable Duration idleEventInterval) {
		this.idleEventInterval = idleEventInterval;
	}

	void setAdminConfig(Map<String, Object> adminConfig) {
		this.adminConfig = Map.copyOf(adminConfig);
	}

	void setCustomizers(List<OrderedRetryContainerCustomizer> customizers) {
		this.customizers = List.copyOf(customizers);
	}

	void setTenantResolver(@Nullable TenantResolver tenantResolver) {
		this.tenantResolver = tenantResolver;
	}

	void setComponentFactory(@Nullable OrderedRetryComponentFactory componentFactory) {
		this.componentFactory = componentFactory;
	}

	/**
	 * Configures a factory with the library's properties and the application's beans.
	 * @param factory the factory
	 */
	public void configure(OrderedRetryContainerFactory factory) {
		PropertyMapper map = PropertyMapper.get();
		ResilienceProperties.Retry retry = this.properties.getRetry();
		factory.setContainerSettings(containerSettings(this.properties.getConsumer()));
		map.from(this.properties.getConsumer()).as(this::batchSettings).to(factory::setBatchSettings);
		map.from(this.properties.getConsumer()::getAttemptTimeout).to(factory::setAttemptTimeout);
		map.from(retry::getDelays).to(factory::setDelays);
		map.from(retry::getMaxAttempts).to(factory::setMaxAttempts);
		map.from(retry::getJitter).to(factory::setDueTimeJitter);
		map.from(this.properties::getDualWrite).to(factory::setDualWrite);
		map.from(this.properties::getReaper).as(this::reaper).to(factory::setReaper);
		map.from(this.classifier).to(factory::setClassifier);
		map.from(this.observer).to(factory::setObserver);
		map.from(this.rebalanceListener).to(factory::setRebalanceListener);
		map.from(this.idleEventInterval).to(factory::setIdleEventInterval);
		map.from(this.tenantResolver).to(factory::setTenantResolver);
		map.from(this.properties.getTenants()).as(TenantsProperties::settings).to(factory::setFairShare);
		map.from(this.properties.getRateLimit()).as(RateLimitProperties::settings).to(factory::setRateLimit);
		factory.setContainerCustomizers(this.customizers);
		OutageProperties outage = this.properties.getOutage().validated();
		AttemptObservationFactory attemptObservations = this.attemptObservations;
		this.assemblies.register(factory,
				new ContainerAssembly(factory, this.engine,
						(this.componentFactory != null) ? this.componentFactory : new OrderedRetryComponentFactory(),
						this::dualWrite, outage::settings, (attemptObservations != null) ? attemptObservations
								: (endpoint, mainTopic) -> AttemptObservation.NONE));
	}

	private DualWriteStrategy dualWrite(DualWrite mode) {
		return switch (mode) {
			case COMPENSATE -> DualWriteStrategy.compensate(this.engine.publisher());
			case TRANSACTION -> DualWriteStrategy.transaction(this.engine.producerClients(), this.engine.instanceId(),
					this.properties.getLocks().getWriteTimeout());
		};
	}

	private BatchSettings batchSettings(ResilienceProperties.Consumer consumer) {
		return new BatchSettings(consumer.getBatchSize(), consumer.getBatchWait(), consumer.getBatchFailure());
	}

	private ContainerSettings containerSettings(ResilienceProperties.Consumer consumer) {
		return new ContainerSettings(consumer.getConcurrency(), consumer.getMaxInFlightPerPartition(),
				consumer.getPollTimeout(), consumer.getCommitInterval(), consumer.getShutdownTimeout(),
				consumer.getRecheckInterval(), consumer.getParkAfter(), this.virtualThreads);
	}

	private @Nullable ReaperSettings reaper(ResilienceProperties.Reaper reaper) {
		if (!reaper.isEnabled()) {
			return null;
		}
		Map<String, Object> adminConfig = this.adminConfig;
		return new ReaperSettings(reaper.getInterval(), reaper.getGrace(), () -> Admin.create(adminConfig));
	}

}
