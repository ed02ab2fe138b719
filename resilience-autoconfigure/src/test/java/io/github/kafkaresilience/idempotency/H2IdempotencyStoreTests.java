package io.github.kafkaresilience.idempotency;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The JDBC store on an embedded H2 database.
 */
class H2IdempotencyStoreTests extends JdbcIdempotencyStoreContract {

	private static HikariDataSource dataSource;

	@BeforeAll
	static void startDatabase() {
		dataSource = new HikariDataSource();
		dataSource.setJdbcUrl("jdbc:h2:mem:idempotency-store;DB_CLOSE_DELAY=-1");
		createSchema(dataSource);
	}

	@AfterAll
	static void stopDatabase() {
		dataSource.close();
	}

	@Override
	DataSource dataSource() {
		return dataSource;
	}

}
