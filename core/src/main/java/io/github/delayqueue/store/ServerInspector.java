package io.github.delayqueue.store;

/**
 * Describes the servers that keep the messages, without changing anything: the port that
 * operations (the dashboard, the startup check) look through to show what the queue runs
 * on and what in its settings may lose messages.
 */
public interface ServerInspector {

	/**
	 * Reads what the servers say of themselves now.
	 * @return the servers and the warnings their settings call for; on a Cluster, a
	 * primary that could not be read is in it with its error
	 * @throws org.springframework.dao.DataAccessException if the one server outside a
	 * Cluster, or the Cluster's topology, cannot be read
	 */
	ServerReport inspect();

}
