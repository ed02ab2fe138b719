/**
 * The {@code kafkaresilience} actuator endpoint and health indicator: the listeners'
 * figures, held keys, dead letters and their replay, and the operators' audited actions.
 */
@NullMarked
package io.github.kafkaresilience.internal.actuate;

import org.jspecify.annotations.NullMarked;
