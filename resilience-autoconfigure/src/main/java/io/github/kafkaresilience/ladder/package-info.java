/**
 * The retry ladder: stage topics and their provisioning, protocol headers, failure
 * classification, the dead-letter topic, and the routing rules that keep a key's order.
 */
@NullMarked
package io.github.kafkaresilience.ladder;

import org.jspecify.annotations.NullMarked;
