package io.github.delayqueue.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The Redis that the {@code spring.data.redis.*} properties point at, chosen as Spring
 * Boot chooses: Sentinel, else a cluster, else master/replica nodes (Spring Boot 4), else
 * one server from the URL or from host and port. Read with the {@link Binder} rather than
 * Spring Boot's Redis properties class, whose name and package differ between Spring Boot
 * 3 and 4. Never holds credentials.
 *
 * @param address the address or nodes tried, for example {@code localhost:6379}
 * @param properties the properties the address comes from
 */
record ConfiguredRedis(String address, String properties) {

	private static final String PREFIX = "spring.data.redis";

	private static final String DEFAULT_HOST = "localhost";

	private static final int DEFAULT_PORT = 6379;

	/**
	 * Reads the {@code spring.data.redis.*} properties of an environment.
	 * @param environment the environment
	 * @return the Redis they point at
	 */
	static ConfiguredRedis from(Environment environment) {
		Binder binder = Binder.get(environment);
		List<String> sentinelNodes = nodes(binder, "sentinel.nodes");
		String master = binder.bind(name("sentinel.master"), String.class).orElse(null);
		if (master != null || !sentinelNodes.isEmpty()) {
			return new ConfiguredRedis("the Sentinel nodes " + listed(sentinelNodes) + " (master '" + master + "')",
					name("sentinel.nodes") + " and " + name("sentinel.master"));
		}
		List<String> clusterNodes = nodes(binder, "cluster.nodes");
		if (!clusterNodes.isEmpty()) {
			return new ConfiguredRedis("the cluster nodes " + listed(clusterNodes), name("cluster.nodes"));
		}
		List<String> replicaNodes = nodes(binder, "masterreplica.nodes");
		if (!replicaNodes.isEmpty()) {
			return new ConfiguredRedis("the master/replica nodes " + listed(replicaNodes), name("masterreplica.nodes"));
		}
		String url = binder.bind(name("url"), String.class).orElse(null);
		if (url != null) {
			return new ConfiguredRedis(hostAndPort(url), name("url"));
		}
		String host = binder.bind(name("host"), String.class).orElse(null);
		Integer port = binder.bind(name("port"), Integer.class).orElse(null);
		return new ConfiguredRedis(
				((host != null) ? host : DEFAULT_HOST) + ":" + ((port != null) ? port : DEFAULT_PORT),
				name("host") + " and " + name("port")
						+ ((host == null && port == null) ? " (both unset: the defaults)" : ""));
	}

	private static List<String> nodes(Binder binder, String property) {
		return binder.bind(name(property), Bindable.listOf(String.class)).orElse(List.of());
	}

	private static String name(String property) {
		return PREFIX + "." + property;
	}

	private static String listed(List<String> nodes) {
		return nodes.isEmpty() ? "(none set)" : String.join(", ", nodes);
	}

	private static String hostAndPort(String url) {
		try {
			URI uri = new URI(url.strip());
			if (uri.getHost() != null) {
				return uri.getHost() + ":" + ((uri.getPort() != -1) ? uri.getPort() : DEFAULT_PORT);
			}
		}
		catch (URISyntaxException ex) {
			// Named below without its value, which may hold a password.
		}
		return "the URL in " + name("url");
	}

}
