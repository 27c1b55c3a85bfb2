package io.github.delayqueue.dashboard;

import org.springframework.boot.actuate.endpoint.Access;

/**
 * What the dashboard lets its users do: the access the {@code delayqueue} endpoint has,
 * resolved from {@code management.endpoint.delayqueue.access} and
 * {@code management.endpoints.access.*} as for the endpoint itself.
 *
 * @param access the endpoint's access
 */
public record DashboardAccess(Access access) {

	/**
	 * Whether the dashboard may show topics and messages.
	 * @return {@code false} when the endpoint's access is {@code none}
	 */
	public boolean canRead() {
		return this.access != Access.NONE;
	}

	/**
	 * Whether the dashboard may change messages and listeners.
	 * @return {@code true} only when the endpoint's access is {@code unrestricted}
	 */
	public boolean canWrite() {
		return this.access == Access.UNRESTRICTED;
	}

	/**
	 * The name of the access, as the page shows it.
	 * @return {@code none}, {@code read-only} or {@code unrestricted}
	 */
	public String name() {
		return switch (this.access) {
			case NONE -> "none";
			case READ_ONLY -> "read-only";
			case UNRESTRICTED -> "unrestricted";
		};
	}

}
