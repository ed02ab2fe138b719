/**
 * The topics of the retry ladders: their names from the templates, their creation and
 * checks, and the startup checks that no other consumer group wrote to them.
 */
@NullMarked
package io.github.kafkaresilience.topics;

import org.jspecify.annotations.NullMarked;
