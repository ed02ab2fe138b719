package io.github.kafkaresilience.idempotency;

import java.time.Clock;

import javax.sql.DataSource;

import io.github.kafkaresilience.autoconfigure.IdempotencyJdbcProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.jdbc.init.PropertiesBasedDataSourceScriptDatabaseInitializer;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract on a real database engine, with the table made by the shipped schema
 * script for that engine.
 */
abstract class JdbcIdempotencyStoreContract extends IdempotencyStoreContract {

	abstract DataSource dataSource();

	static void createSchema(DataSource dataSource) {
		IdempotencyJdbcProperties properties = new IdempotencyJdbcProperties();
		properties.setInitializeSchema(DatabaseInitializationMode.ALWAYS);
		assertThat(
				new PropertiesBasedDataSourceScriptDatabaseInitializer<>(dataSource, properties).initializeDatabase())
			.isTrue();
		// a second start runs the script again and must not fail on the existing table
		assertThat(
				new PropertiesBasedDataSourceScriptDatabaseInitializer<>(dataSource, properties).initializeDatabase())
			.isTrue();
	}

	@Override
	IdempotencyStore createStore(Clock clock) {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource());
		jdbc.update("DELETE FROM " + JdbcIdempotencyStore.TABLE);
		return new JdbcIdempotencyStore(jdbc, clock);
	}

	@Test
	void aCompletionInARolledBackTransactionIsUndoneWithTheHandlersOwnWrites() {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource());
		jdbc.execute("CREATE TABLE IF NOT EXISTS charges (payment VARCHAR(20) PRIMARY KEY)");
		jdbc.update("DELETE FROM charges");
		TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
		Claim claim = this.store.claim("listener", "p-1", LEASE);

		transaction.executeWithoutResult((status) -> {
			jdbc.update("INSERT INTO charges (payment) VALUES ('p-1')");
			this.store.complete(claim);
			status.setRollbackOnly();
		});

		assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM charges", Integer.class)).isZero();
		assertThat(this.store.claim("listener", "p-1", LEASE).status()).isEqualTo(Claim.Status.HELD);
		transaction.executeWithoutResult((status) -> {
			jdbc.update("INSERT INTO charges (payment) VALUES ('p-1')");
			this.store.complete(claim);
		});
		assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM charges", Integer.class)).isOne();
		assertThat(this.store.claim("listener", "p-1", LEASE).status()).isEqualTo(Claim.Status.COMPLETED);
	}

}
