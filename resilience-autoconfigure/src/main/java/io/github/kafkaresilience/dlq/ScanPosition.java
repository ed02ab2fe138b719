package io.github.kafkaresilience.dlq;

/**
 * Where a read of a dead-letter topic stopped in one partition: the offset it would have
 * read next. A scan that stops early at its limit lists one for each partition it did not
 * read to its end; a read from there on (with {@code since} later than what was read)
 * goes on.
 *
 * @param partition the partition
 * @param offset the next offset not read
 * @since 0.1.0
 */
public record ScanPosition(int partition, long offset) {

	@Override
	public String toString() {
		return this.partition + "/" + this.offset;
	}

}
