package io.github.kafkaresilience.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JDBC idempotency store's schema script: one that fails stops the start unless
 * {@code kafka.resilience.idempotency.jdbc.continue-on-error} is set.
 */
class IdempotencyJdbcPropertiesTests {

	@TempDir
	Path directory;

	@Test
	void aSchemaScriptThatFailsStopsTheStart() throws IOException {
		runner("fails").withPropertyValues(schema()).run((context) -> assertThat(context).hasFailed());
	}

	@Test
	void aSchemaScriptThatFailsIsPassedOverWhenContinueOnErrorIsSet() throws IOException {
		runner("continues").withPropertyValues(schema(), "kafka.resilience.idempotency.jdbc.continue-on-error=true")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void continueOnErrorIsOffByDefault() {
		assertThat(new IdempotencyJdbcProperties().isContinueOnError()).isFalse();
	}

	private ApplicationContextRunner runner(String database) {
		return new ApplicationContextRunner().withUserConfiguration(IdempotencyConfiguration.Jdbc.class)
			.withBean(DataSource.class,
					() -> new DriverManagerDataSource("jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1"))
			.withPropertyValues("kafka.resilience.idempotency.jdbc.initialize-schema=always");
	}

	private String schema() throws IOException {
		Path script = Files.writeString(this.directory.resolve("broken.sql"), "CREATE TABLE broken (;\n");
		return "kafka.resilience.idempotency.jdbc.schema=" + script.toUri();
	}

}
