/**
 * Spring Boot auto-configuration of ordered non-blocking retries and its
 * {@code kafka.resilience.*} properties.
 */
@NullMarked
package io.github.kafkaresilience.autoconfigure;

import org.jspecify.annotations.NullMarked;
