package io.github.kafkaresilience.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.jdbc.init.DatabaseInitializationProperties;

/**
 * How the JDBC idempotency store's table is created. Unlike Boot's own script
 * initializers, a schema script that fails stops the start by default
 * ({@code continue-on-error} is {@code false}): a store without its table must not let
 * the application start quietly.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("kafka.resilience.idempotency.jdbc")
public class IdempotencyJdbcProperties extends DatabaseInitializationProperties {

	private static final String DEFAULT_SCHEMA_LOCATION = "classpath:io/github/kafkaresilience/idempotency/schema-@@platform@@.sql";

	public IdempotencyJdbcProperties() {
		setContinueOnError(false);
	}

	@Override
	public String getDefaultSchemaLocation() {
		return DEFAULT_SCHEMA_LOCATION;
	}

}
