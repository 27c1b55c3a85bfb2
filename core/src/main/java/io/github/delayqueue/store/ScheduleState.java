package io.github.delayqueue.store;

/**
 * A recurring schedule as the store keeps it:
 * {@code <next tick ms>:<paused 0 or 1>:<definition>} in its partition. The store does
 * not read the definition; an instance that changes the state names the one it read, so
 * that of several instances acting at once one does.
 *
 * @param name the schedule's name
 * @param topic the topic its ticks are sent to
 * @param nextTickMillis the next tick not sent yet (epoch ms)
 * @param paused whether it is paused
 * @param definition its definition, as the schedule API wrote it
 */
public record ScheduleState(String name, String topic, long nextTickMillis, boolean paused, String definition) {

	/**
	 * Reads a stored state.
	 * @param name the schedule's name
	 * @param topic its topic
	 * @param stored the stored form
	 * @return the state
	 * @throws CorruptMessageException if the stored form is not one
	 */
	public static ScheduleState parse(String name, String topic, String stored) {
		int first = stored.indexOf(':');
		int second = (first < 0) ? -1 : stored.indexOf(':', first + 1);
		if (second != first + 2 || (stored.charAt(first + 1) != '0' && stored.charAt(first + 1) != '1')) {
			throw new CorruptMessageException("schedule '" + name + "' has an unreadable state");
		}
		try {
			return new ScheduleState(name, topic, Long.parseLong(stored.substring(0, first)),
					stored.charAt(first + 1) == '1', stored.substring(second + 1));
		}
		catch (NumberFormatException ex) {
			throw new CorruptMessageException("schedule '" + name + "' has an unreadable state");
		}
	}

	/**
	 * @return the stored form
	 */
	public String stored() {
		return this.nextTickMillis + ":" + (this.paused ? '1' : '0') + ":" + this.definition;
	}

}
