package com.example.payments;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample as the build packages it, processed ahead of time
 * ({@code spring-boot:process-aot}) and started with {@code -Dspring.aot.enabled=true}:
 * its context comes from the generated bean definitions instead of the configuration
 * classes, and the demo still runs to the end and exits with status 0. Spring Boot
 * refuses to start in that mode when the generated initializer is missing, so the exit
 * status alone shows that the processed context ran.
 */
class AotProcessedSampleIT {

	@Test
	void theProcessedSampleRunsItsDemoToExitStatus0() throws Exception {
		File jar = jar();
		try (JarFile archive = new JarFile(jar)) {
			assertThat(archive.getEntry(
					"BOOT-INF/classes/com/example/payments/PaymentsSampleApplication__ApplicationContextInitializer.class"))
				.as("the jar holds the classes of the ahead-of-time processing")
				.isNotNull();
		}
		String java = ProcessHandle.current().info().command().orElse("java");
		Path output = Files.createTempFile("aot-sample", ".log");
		try {
			Process process = new ProcessBuilder(java, "-Dspring.aot.enabled=true", "-jar", jar.getPath(),
					"--server.port=0", "--sample.timeout=120s")
				.redirectErrorStream(true)
				.redirectOutput(output.toFile())
				.start();
			boolean ended = process.waitFor(180, TimeUnit.SECONDS);
			if (!ended) {
				process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
			String text = Files.readString(output);
			assertThat(ended).as("the sample did not end:%n%s", text).isTrue();
			assertThat(process.exitValue()).as(text).isZero();
			List<String> lines = text.lines().toList();
			assertThat(lines).as(text)
				.contains("[sample] payments:      240 sent over 12 customers; 237 charged, 3 dead-lettered")
				.contains("[sample] result:        OK, every customer's payments were charged in order");
		}
		finally {
			Files.deleteIfExists(output);
		}
	}

	private static File jar() {
		String jar = System.getProperty("sample.jar");
		assertThat(jar).as("sample.jar is set by the failsafe plugin").isNotNull();
		assertThat(new File(jar)).exists();
		return new File(jar);
	}

}
