package io.github.kafkaresilience.listener;

import io.github.kafkaresilience.ladder.Delivery;
import org.jspecify.annotations.Nullable;

/**
 * Finds the tenant of a record, for a listener that shares its workers fairly between
 * tenants ({@code kafka.resilience.tenants.*}). Called on the poll thread for every
 * record a poll returns, before the record is deserialized: it must be quick and must not
 * block. A record whose tenant is {@code null}, or whose resolver throws, belongs to the
 * tenant {@value #UNKNOWN}.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface TenantResolver {

	/** The tenant of records whose tenant could not be found. */
	String UNKNOWN = "unknown";

	/**
	 * The tenant of a record.
	 * @param record the record, as the broker holds it
	 * @return its tenant, or {@code null} when it has none
	 */
	@Nullable String tenantOf(Delivery record);

}
