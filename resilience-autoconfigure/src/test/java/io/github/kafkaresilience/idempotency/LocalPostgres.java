package io.github.kafkaresilience.idempotency;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.util.FileSystemUtils;

/**
 * A PostgreSQL server for tests: the one named by
 * {@code KAFKA_RESILIENCE_TEST_POSTGRES_URL} (with {@code _USER} and {@code _PASSWORD}),
 * or else a throwaway one started from the PostgreSQL binaries installed on this machine,
 * in a temporary directory on a free port. Without either, there is none.
 */
final class LocalPostgres implements AutoCloseable {

	private static final String URL_VARIABLE = "KAFKA_RESILIENCE_TEST_POSTGRES_URL";

	private final String url;

	private final String user;

	private final String password;

	private final String description;

	private final @Nullable Path directory;

	private final @Nullable Path bin;

	private final boolean asPostgresUser;

	private LocalPostgres(String url, String user, String password, String description, @Nullable Path directory,
			@Nullable Path bin, boolean asPostgresUser) {
		this.url = url;
		this.user = user;
		this.password = password;
		this.description = description;
		this.directory = directory;
		this.bin = bin;
		this.asPostgresUser = asPostgresUser;
	}

	/**
	 * The configured server, a throwaway one, or {@code null} when PostgreSQL is not
	 * installed.
	 */
	static @Nullable LocalPostgres startIfAvailable() throws IOException, InterruptedException {
		String configured = System.getenv(URL_VARIABLE);
		if (configured != null && !configured.isBlank()) {
			return new LocalPostgres(configured, orDefault(System.getenv(URL_VARIABLE + "_USER"), "postgres"),
					orDefault(System.getenv(URL_VARIABLE + "_PASSWORD"), ""), "PostgreSQL at " + configured, null, null,
					false);
		}
		Path bin = installedBinaries();
		if (bin == null) {
			return null;
		}
		boolean root = "root".equals(System.getProperty("user.name"));
		Path directory = Files.createTempDirectory("kafka-resilience-pg");
		if (root) {
			run(List.of("chown", "postgres", directory.toString()), directory, false);
		}
		Path data = directory.resolve("data");
		run(List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-A", "trust", "-U", "postgres", "-E",
				"UTF8", "--no-sync"), directory, root);
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l",
				directory.resolve("server.log").toString(), "-w", "-t", "60", "-o",
				"-p " + port + " -k " + directory + " -c listen_addresses=127.0.0.1 -c fsync=off", "start"), directory,
				root);
		String url = "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
		return new LocalPostgres(url, "postgres", "", "a throwaway PostgreSQL from " + bin + " on port " + port,
				directory, bin, root);
	}

	DriverManagerDataSource dataSource() {
		return new DriverManagerDataSource(this.url, this.user, this.password);
	}

	String url() {
		return this.url;
	}

	String user() {
		return this.user;
	}

	String password() {
		return this.password;
	}

	@Override
	public String toString() {
		return this.description;
	}

	@Override
	public void close() throws IOException, InterruptedException {
		if (this.directory == null || this.bin == null) {
			return;
		}
		run(List.of(this.bin.resolve("pg_ctl").toString(), "-D", this.directory.resolve("data").toString(), "-m",
				"immediate", "-w", "stop"), this.directory, this.asPostgresUser);
		FileSystemUtils.deleteRecursively(this.directory);
	}

	private static @Nullable Path installedBinaries() {
		File[] versions = new File("/usr/lib/postgresql").listFiles();
		if (versions != null) {
			Path newest = Arrays.stream(versions)
				.map((version) -> version.toPath().resolve("bin"))
				.filter((bin) -> Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("pg_ctl")))
				.max(Comparator.comparing((bin) -> bin.getParent().getFileName().toString(),
						Comparator.comparingInt(LocalPostgres::versionNumber)))
				.orElse(null);
			if (newest != null) {
				return newest;
			}
		}
		String path = System.getenv("PATH");
		return (path != null) ? Stream.of(path.split(File.pathSeparator))
			.map(Path::of)
			.filter((bin) -> Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("pg_ctl")))
			.findFirst()
			.orElse(null) : null;
	}

	private static int versionNumber(String name) {
		try {
			return Integer.parseInt(name);
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	private static void run(List<String> command, Path directory, boolean asPostgresUser)
			throws IOException, InterruptedException {
		List<String> full = new ArrayList<>();
		if (asPostgresUser) {
			full.addAll(List.of("runuser", "-u", "postgres", "--"));
		}
		full.addAll(command);
		Path output = Files.createTempFile("kafka-resilience-pg", ".out");
		Process process = new ProcessBuilder(full).directory(directory.toFile())
			.redirectErrorStream(true)
			.redirectOutput(output.toFile())
			.start();
		if (!process.waitFor(120, TimeUnit.SECONDS)) {
			process.destroyForcibly();
			throw new IOException("Timed out: " + String.join(" ", full));
		}
		String text = Files.readString(output);
		Files.deleteIfExists(output);
		if (process.exitValue() != 0) {
			throw new IOException("Failed (" + process.exitValue() + "): " + String.join(" ", full) + "\n" + text);
		}
	}

	private static String orDefault(@Nullable String value, String fallback) {
		return (value != null && !value.isEmpty()) ? value : fallback;
	}

}
