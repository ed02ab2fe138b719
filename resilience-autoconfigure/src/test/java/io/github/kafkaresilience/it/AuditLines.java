package io.github.kafkaresilience.it;

import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

/**
 * The lines logged on {@code kafka.resilience.audit} from now on, at INFO and above, as
 * an operator's log would hold them. Start it once the application is up: Boot's logging
 * set-up at startup removes appenders added before.
 */
final class AuditLines implements AutoCloseable {

	private final Logger logger = (Logger) LoggerFactory.getLogger("kafka.resilience.audit");

	private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

	private final Level level;

	private AuditLines() {
		// the tests' logging configuration keeps the broker's 'kafka' loggers at WARN
		this.level = this.logger.getLevel();
		this.logger.setLevel(Level.INFO);
		this.appender.start();
		this.logger.addAppender(this.appender);
	}

	static AuditLines capture() {
		return new AuditLines();
	}

	/** Each line as written: level and message. */
	List<String> lines() {
		synchronized (this.appender) {
			return this.appender.list.stream()
				.map((event) -> event.getLevel() + " " + event.getFormattedMessage())
				.toList();
		}
	}

	@Override
	public void close() {
		this.logger.detachAppender(this.appender);
		this.appender.stop();
		this.logger.setLevel(this.level);
	}

}
