package io.github.kafkaresilience.internal.listener;

import java.util.IdentityHashMap;
import java.util.Map;

import io.github.kafkaresilience.listener.OrderedRetryContainerFactory;

/**
 * The {@link ContainerAssembly} of each {@link OrderedRetryContainerFactory} of an
 * application: {@code OrderedRetryContainerFactoryConfigurer.configure(factory)}
 * registers it, and the listener registry asks for it when it creates a listener's
 * container. It keeps the internal parts a factory's containers are assembled from out of
 * the factory, whose public methods are API.
 */
public final class ContainerAssemblies {

	private final Map<OrderedRetryContainerFactory, ContainerAssembly> assemblies = new IdentityHashMap<>();

	/**
	 * Registers what a factory's containers are assembled from, in place of what it had.
	 * @param factory the factory
	 * @param assembly what its containers are assembled from
	 */
	public synchronized void register(OrderedRetryContainerFactory factory, ContainerAssembly assembly) {
		this.assemblies.put(factory, assembly);
	}

	/**
	 * What a factory's containers are assembled from.
	 * @param factory the factory
	 * @return its assembly
	 * @throws IllegalStateException when the factory was not configured
	 */
	public synchronized ContainerAssembly of(OrderedRetryContainerFactory factory) {
		ContainerAssembly assembly = this.assemblies.get(factory);
		if (assembly == null) {
			throw new IllegalStateException("This OrderedRetryContainerFactory was not configured; configure it with "
					+ "OrderedRetryContainerFactoryConfigurer.configure(factory) first");
		}
		return assembly;
	}

}
