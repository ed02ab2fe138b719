package io.github.kafkaresilience.autoconfigure;

import java.io.PrintStream;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;

import io.github.kafkaresilience.dlq.DlqReplayer;
import io.github.kafkaresilience.internal.dlq.ReplayArguments;
import io.github.kafkaresilience.dlq.ReplayReport;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Runs the {@code replay} command (see {@link ReplayCommandEnvironmentPostProcessor}):
 * reads the arguments after {@code replay}, replays, prints the report and exits the JVM,
 * with status 0 when the replay ran, 2 for bad arguments and 1 when it failed.
 *
 * @since 0.1.0
 */
class ReplayCommandRunner implements ApplicationRunner {

	private final DlqReplayer replayer;

	private final ConfigurableApplicationContext context;

	private final Clock clock;

	ReplayCommandRunner(DlqReplayer replayer, ConfigurableApplicationContext context, Clock clock) {
		this.replayer = replayer;
		this.context = context;
		this.clock = clock;
	}

	@Override
	public void run(ApplicationArguments args) {
		int status = replay(Arrays.asList(args.getSourceArgs()), System.out, System.err);
		System.exit(SpringApplication.exit(this.context, () -> status));
	}

	int replay(List<String> sourceArgs, PrintStream out, PrintStream err) {
		List<String> args = sourceArgs.subList(sourceArgs.indexOf(ReplayCommandEnvironmentPostProcessor.REPLAY) + 1,
				sourceArgs.size());
		if (args.contains("--help")) {
			out.println(ReplayArguments.USAGE);
			return 0;
		}
		try {
			ReplayReport report = this.replayer.replay(ReplayArguments.parse(args, this.clock));
			out.println(report);
			return 0;
		}
		catch (IllegalArgumentException ex) {
			err.println(ex.getMessage());
			return 2;
		}
		catch (RuntimeException ex) {
			err.println("Replay failed: " + ex.getMessage());
			return 1;
		}
	}

}
