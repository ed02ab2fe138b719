package io.github.kafkaresilience.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.init.DatabaseInitializationProperties;

/**
 * How the JDBC idempotency store's table is created.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("kafka.resilience.idempotency.jdbc")
public class IdempotencyJdbcProperties extends DatabaseInitializationProperties {

	private static final String DEFAULT_SCHEMA_LOCATION = "classpath:io/github/kafkaresilience/idempotency/schema-@@platform@@.sql";

	@Override
	public String getDefaultSchemaLocation() {
		return DEFAULT_SCHEMA_LOCATION;
	}

}
