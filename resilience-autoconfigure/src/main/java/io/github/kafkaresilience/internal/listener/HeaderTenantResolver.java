package io.github.kafkaresilience.internal.listener;

import java.nio.charset.StandardCharsets;

import io.github.kafkaresilience.ladder.Delivery;
import io.github.kafkaresilience.listener.TenantResolver;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

/** The tenant is the value of a header, as UTF-8 text: its last one. */
public final class HeaderTenantResolver implements TenantResolver {

	private final String header;

	public HeaderTenantResolver(String header) {
		if (header.isBlank()) {
			throw new IllegalArgumentException("The tenant header must be named");
		}
		this.header = header;
	}

	@Override
	public @Nullable String tenantOf(Delivery record) {
		Header last = record.headers().lastHeader(this.header);
		byte[] value = (last != null) ? last.value() : null;
		return (value != null && value.length > 0) ? new String(value, StandardCharsets.UTF_8) : null;
	}

	@Override
	public String toString() {
		return "header '" + this.header + "'";
	}

}
