package io.github.kafkaresilience.autoconfigure;

import io.github.kafkaresilience.internal.listener.ListenerRegistry;
import io.github.kafkaresilience.internal.lock.LockCoordinator;
import io.github.kafkaresilience.internal.dlq.DlqDispatcher;
import io.github.kafkaresilience.internal.metrics.DlqMetrics;
import io.github.kafkaresilience.internal.metrics.LadderMetrics;
import io.github.kafkaresilience.internal.metrics.ListenerMetrics;
import io.github.kafkaresilience.internal.metrics.LockMetrics;
import io.github.kafkaresilience.internal.metrics.OutageMetrics;
import io.github.kafkaresilience.internal.metrics.TenantMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Meters of the lock registries and the listeners, when Micrometer is on the class path.
 * Boot binds every {@link MeterBinder} bean to the application's meter registries.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(MeterBinder.class)
class ResilienceMetricsConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LockMetrics kafkaResilienceLockMetrics(LockCoordinator lockCoordinator) {
		return new LockMetrics(lockCoordinator);
	}

	@Bean
	@ConditionalOnMissingBean
	LadderMetrics kafkaResilienceLadderMetrics() {
		return new LadderMetrics();
	}

	@Bean
	@ConditionalOnMissingBean
	DlqMetrics kafkaResilienceDlqMetrics(ObjectProvider<DlqDispatcher> dlqDispatcher) {
		return new DlqMetrics(dlqDispatcher::getIfAvailable);
	}

	@Bean
	@ConditionalOnMissingBean
	ListenerMetrics kafkaResilienceListenerMetrics(ListenerRegistry listenerRegistry) {
		return new ListenerMetrics(listenerRegistry);
	}

	@Bean
	@ConditionalOnMissingBean
	OutageMetrics kafkaResilienceOutageMetrics(ListenerRegistry listenerRegistry) {
		return new OutageMetrics(listenerRegistry);
	}

	@Bean
	@ConditionalOnMissingBean
	TenantMetrics kafkaResilienceTenantMetrics(ListenerRegistry listenerRegistry) {
		return new TenantMetrics(listenerRegistry);
	}

}
