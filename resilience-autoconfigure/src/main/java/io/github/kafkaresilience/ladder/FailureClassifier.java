package io.github.kafkaresilience.ladder;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

import io.github.kafkaresilience.PermanentFailureException;

/**
 * Tells permanent failures (dead-lettered at once) from transient ones (retried): a
 * failure is permanent when it, or one of its causes, is a
 * {@link PermanentFailureException} or an instance of a configured permanent type.
 *
 * @since 0.1.0
 */
public class FailureClassifier {

	private final List<Class<? extends Throwable>> permanentTypes;

	public FailureClassifier(List<Class<? extends Throwable>> permanentTypes) {
		this.permanentTypes = List.copyOf(permanentTypes);
	}

	public boolean isPermanent(Throwable failure) {
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		for (Throwable current = failure; current != null && seen.add(current); current = current.getCause()) {
			if (current instanceof PermanentFailureException) {
				return true;
			}
			for (Class<? extends Throwable> type : this.permanentTypes) {
				if (type.isInstance(current)) {
					return true;
				}
			}
		}
		return false;
	}

}
