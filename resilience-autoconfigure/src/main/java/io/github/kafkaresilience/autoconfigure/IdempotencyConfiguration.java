package io.github.kafkaresilience.autoconfigure;

import java.time.Clock;

import javax.sql.DataSource;

import io.github.kafkaresilience.internal.idempotency.IdempotencyGuards;
import io.github.kafkaresilience.idempotency.IdempotencyKeyResolver;
import io.github.kafkaresilience.idempotency.IdempotencyObserver;
import io.github.kafkaresilience.idempotency.IdempotencyStore;
import io.github.kafkaresilience.idempotency.InMemoryIdempotencyStore;
import io.github.kafkaresilience.idempotency.JdbcIdempotencyStore;
import io.github.kafkaresilience.internal.metrics.IdempotencyMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.init.DatabaseInitializationProperties;
import org.springframework.boot.jdbc.init.PropertiesBasedDataSourceScriptDatabaseInitializer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The idempotency guards of the listeners that opt in, their store (JDBC when the
 * application has one {@link DataSource}, otherwise in memory) and their meters.
 */
@Configuration(proxyBeanMethods = false)
class IdempotencyConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyGuards kafkaResilienceIdempotencyGuards(ResilienceProperties properties,
			ObjectProvider<IdempotencyStore> stores, ObjectProvider<IdempotencyKeyResolver> keyResolvers,
			ConfigurableListableBeanFactory beanFactory, ObjectProvider<PlatformTransactionManager> transactionManagers,
			ObjectProvider<IdempotencyObserver.Factory> observers) {
		ResilienceProperties.Idempotency idempotency = properties.getIdempotency();
		PlatformTransactionManager transactionManager = idempotency.isTransaction() ? transactionManagers.getIfUnique()
				: null;
		TransactionOperations transactions = (transactionManager != null) ? new TransactionTemplate(transactionManager)
				: null;
		IdempotencyKeyResolver keys = keyResolvers.getIfUnique();
		return new IdempotencyGuards(
				new IdempotencyGuards.Settings(idempotency.isEnabled(), idempotency.getLease(),
						idempotency.getRetention(), idempotency.getCleanupInterval()),
				() -> stores.getIfAvailable(InMemoryIdempotencyStore::new),
				(mainTopic) -> (keys != null) ? keys : IdempotencyKeyResolver.birthplace(mainTopic), beanFactory,
				transactions, observers.getIfAvailable(() -> (listenerId, mainTopic) -> IdempotencyObserver.NONE),
				Clock.systemUTC());
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ JdbcTemplate.class, DatabaseInitializationProperties.class })
	@ConditionalOnSingleCandidate(DataSource.class)
	@EnableConfigurationProperties(IdempotencyJdbcProperties.class)
	static class Jdbc {

		@Bean
		@ConditionalOnMissingBean(IdempotencyStore.class)
		@DependsOnDatabaseInitialization
		JdbcIdempotencyStore kafkaResilienceIdempotencyStore(DataSource dataSource) {
			return new JdbcIdempotencyStore(new JdbcTemplate(dataSource));
		}

		@Bean
		@ConditionalOnMissingBean(name = "kafkaResilienceIdempotencySchemaInitializer")
		PropertiesBasedDataSourceScriptDatabaseInitializer<IdempotencyJdbcProperties> kafkaResilienceIdempotencySchemaInitializer(
				DataSource dataSource, IdempotencyJdbcProperties properties) {
			return new PropertiesBasedDataSourceScriptDatabaseInitializer<>(dataSource, properties);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterBinder.class)
	static class Metrics {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyMetrics kafkaResilienceIdempotencyMetrics() {
			return new IdempotencyMetrics();
		}

	}

}
