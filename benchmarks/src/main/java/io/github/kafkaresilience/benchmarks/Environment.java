package io.github.kafkaresilience.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import com.sun.management.OperatingSystemMXBean;
import org.jspecify.annotations.Nullable;

/**
 * The machine, the JVM, the versions and the commit a run measured, as label and text
 * pairs for the report.
 */
final class Environment {

	private Environment() {
	}

	static Map<String, String> describe() {
		Map<String, String> described = new LinkedHashMap<>();
		described.put("machine", machine());
		described.put("JVM", jvm());
		described.put("versions",
				"kafka-resilience " + Versions.library() + ", kafka-clients " + Versions.kafkaClients()
						+ " (the in-process broker is the same Kafka release), spring-kafka " + Versions.springKafka()
						+ ", Spring Boot " + Versions.springBoot() + ", Spring Framework " + Versions.springFramework()
						+ ", Parallel Consumer " + ParallelConsumerRunner.version());
		described.put("commit", commit());
		return described;
	}

	/**
	 * The commit of the working directory's git work tree when the run started, and
	 * whether tracked files differed from it: the library is built from the work tree,
	 * not from the commit.
	 */
	private static String commit() {
		String hash = git("rev-parse", "--short", "HEAD");
		if (hash == null || hash.isBlank()) {
			return "unknown (not run in a git work tree)";
		}
		String status = git("status", "--porcelain", "--untracked-files=no");
		if (status == null) {
			return hash.strip() + " (whether the work tree differs from it is unknown)";
		}
		List<String> changed = new ArrayList<>();
		status.lines().filter((line) -> line.length() > 3).forEach((line) -> changed.add(line.substring(3)));
		if (changed.isEmpty()) {
			return hash.strip() + ", work tree clean";
		}
		String shown = String.join(", ", changed.subList(0, Math.min(5, changed.size())))
				+ ((changed.size() > 5) ? ", …" : "");
		return hash.strip() + ", work tree dirty: " + changed.size() + " tracked file(s) changed (" + shown + ")";
	}

	private static @Nullable String git(String... arguments) {
		List<String> command = new ArrayList<>();
		command.add("git");
		command.addAll(List.of(arguments));
		try {
			Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
			String output;
			try (InputStream in = process.getInputStream()) {
				output = new String(in.readAllBytes());
			}
			if (!process.waitFor(10, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				return null;
			}
			return (process.exitValue() == 0) ? output : null;
		}
		catch (IOException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	private static String machine() {
		StringBuilder machine = new StringBuilder();
		machine.append(Runtime.getRuntime().availableProcessors()).append(" cores");
		String cpu = cpuModel();
		if (cpu != null) {
			machine.append(" (").append(cpu).append(")");
		}
		if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
			machine.append(", ").append(gib(os.getTotalMemorySize())).append(" memory");
		}
		machine.append(", ")
			.append(System.getProperty("os.name"))
			.append(' ')
			.append(System.getProperty("os.version"))
			.append(" (")
			.append(System.getProperty("os.arch"))
			.append(")");
		return machine.toString();
	}

	private static String jvm() {
		String collectors = ManagementFactory.getGarbageCollectorMXBeans()
			.stream()
			.map(GarbageCollectorMXBean::getName)
			.collect(Collectors.joining(", "));
		return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
				+ System.getProperty("java.vm.vendor") + "), max heap " + gib(Runtime.getRuntime().maxMemory())
				+ ", GC " + collectors;
	}

	private static String cpuModel() {
		Path cpuinfo = Path.of("/proc/cpuinfo");
		if (!Files.isReadable(cpuinfo)) {
			return null;
		}
		try {
			List<String> lines = Files.readAllLines(cpuinfo);
			return lines.stream()
				.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse(null);
		}
		catch (IOException ex) {
			return null;
		}
	}

	private static String gib(long bytes) {
		return String.format(Locale.ROOT, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
	}

}
