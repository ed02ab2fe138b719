package io.github.kafkaresilience.it;

import io.github.kafkaresilience.internal.ladder.FaultInjection;
import io.github.kafkaresilience.internal.listener.OrderedRetryComponentFactory;

/**
 * How a test injects faults into the moves: as a component factory bean, which the
 * auto-configuration gives the container factory. The auto-configuration looks up no
 * {@link FaultInjection} bean.
 */
final class Faults {

	private Faults() {
	}

	static OrderedRetryComponentFactory injecting(FaultInjection faults) {
		return new OrderedRetryComponentFactory() {

			@Override
			public FaultInjection faultInjection() {
				return faults;
			}

		};
	}

}
