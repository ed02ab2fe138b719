package io.github.kafkaresilience.internal.lock;

/**
 * A place in the ladder: a stage (0 is the main topic) and an offset in that stage's
 * topic partition. Positions order by stage, then offset: a record at a later position
 * leaves the ladder later.
 *
 * @param stage the stage, 0 for the main topic
 * @param offset the offset in the stage topic's partition
 * @since 0.1.0
 */
public record Position(int stage, long offset) implements Comparable<Position> {

	@Override
	public int compareTo(Position other) {
		int byStage = Integer.compare(this.stage, other.stage);
		return (byStage != 0) ? byStage : Long.compare(this.offset, other.offset);
	}

	public boolean isAfter(Position other) {
		return compareTo(other) > 0;
	}

	@Override
	public String toString() {
		return "(" + this.stage + ", " + this.offset + ")";
	}

}
