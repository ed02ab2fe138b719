package io.github.kafkaresilience.listener;

/**
 * Starts, stops, pauses and resumes the {@code @OrderedRetryListener}s of the application
 * by their ids. The auto-configuration defines the one bean of this type; it starts the
 * listeners with the application context and stops them with it.
 *
 * @since 0.1.0
 */
public interface OrderedRetryListenerRegistry {

	/**
	 * Pauses a listener: it takes no new records, its running records finish and its
	 * waiting ones wait; locks stay, so every key keeps its order. It stays in its
	 * consumer group.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	void pause(String id);

	/**
	 * Resumes a listener paused with {@link #pause(String)}.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	void resume(String id);

	/**
	 * Whether a listener was paused with {@link #pause(String)} and not resumed since.
	 * @param id the listener id
	 * @return whether a pause was asked for
	 * @throws IllegalArgumentException when no listener has that id
	 */
	boolean isPauseRequested(String id);

	/**
	 * Whether a listener's container runs.
	 * @param id the listener id
	 * @return whether it runs
	 * @throws IllegalArgumentException when no listener has that id
	 */
	boolean isRunning(String id);

	/**
	 * Starts a listener, typically one whose {@code autoStartup} is false, once the
	 * registry has started (it provisions the ladders and starts the lock tailers).
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	void start(String id);

	/**
	 * Stops a listener: it finishes its running records, commits and leaves its group.
	 * Its locks stay; another instance, or this one started again, goes on with them.
	 * @param id the listener id
	 * @throws IllegalArgumentException when no listener has that id
	 */
	void stop(String id);

}
