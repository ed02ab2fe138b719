package io.github.kafkaresilience.idempotency;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The JDBC store on PostgreSQL: the server named by
 * {@code KAFKA_RESILIENCE_TEST_POSTGRES_URL}, or a throwaway one started from the
 * binaries installed here. Where PostgreSQL is not installed, each test is reported as
 * skipped, with the reason.
 */
class PostgresIdempotencyStoreTests extends JdbcIdempotencyStoreContract {

	private static final Log logger = LogFactory.getLog(PostgresIdempotencyStoreTests.class);

	private static LocalPostgres postgres;

	private static HikariDataSource dataSource;

	@BeforeAll
	static void startDatabase() throws Exception {
		postgres = LocalPostgres.startIfAvailable();
		if (postgres == null) {
			return;
		}
		dataSource = new HikariDataSource();
		dataSource.setJdbcUrl(postgres.url());
		dataSource.setUsername(postgres.user());
		dataSource.setPassword(postgres.password());
		String version = new JdbcTemplate(dataSource).queryForObject("SELECT version()", String.class);
		logger.info("Running the JDBC idempotency store tests on " + postgres + ": " + version);
		System.out.println("PostgresIdempotencyStoreTests run on " + postgres + ": " + version);
		createSchema(dataSource);
	}

	@BeforeEach
	@Override
	void createStore() {
		Assumptions.assumeTrue(postgres != null,
				"PostgreSQL is not installed here (no /usr/lib/postgresql/*/bin/initdb or initdb on the PATH) and "
						+ "KAFKA_RESILIENCE_TEST_POSTGRES_URL is not set");
		super.createStore();
	}

	@AfterAll
	static void stopDatabase() throws Exception {
		if (dataSource != null) {
			dataSource.close();
		}
		if (postgres != null) {
			postgres.close();
		}
	}

	@Override
	DataSource dataSource() {
		return dataSource;
	}

}
