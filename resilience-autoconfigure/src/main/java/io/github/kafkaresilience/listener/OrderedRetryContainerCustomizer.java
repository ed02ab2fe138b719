package io.github.kafkaresilience.listener;

import io.github.kafkaresilience.container.OrderedRetryContainer;

/**
 * Customizes each {@link OrderedRetryContainer} an {@link OrderedRetryContainerFactory}
 * creates, before it starts, as spring-kafka's {@code ContainerCustomizer} does for a
 * {@code @KafkaListener}'s container. Beans of this type are applied to the
 * auto-configured factory in their {@code @Order}.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface OrderedRetryContainerCustomizer {

	/**
	 * Customizes a container.
	 * @param container the container, created and not started
	 */
	void customize(OrderedRetryContainer container);

}
