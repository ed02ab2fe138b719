package io.github.kafkaresilience.autoconfigure;

/**
 * When the endpoint and the console show what dead letters carry (their values and the
 * application's headers), as Spring Boot's {@code show-values} for its endpoints.
 *
 * @since 0.1.0
 */
public enum ShowValues {

	/** Never: values and the application's headers are hidden from everyone. */
	NEVER,

	/**
	 * To a caller with the operator role ({@code kafka.resilience.console.role}) when
	 * Spring Security is present; without it, to no one.
	 */
	WHEN_AUTHORIZED,

	/** To everyone who may read the endpoint. */
	ALWAYS

}
