package io.github.delayqueue.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.core.env.Environment;

/**
 * The Redis that the {@code spring.data.redis.*} properties point at, chosen as Spring
 * Boot chooses: Sentinel, else a cluster, else master/replica nodes, else one server from
 * the URL or from host and port. Never holds credentials.
 *
 * @param address the address or nodes tried, for example {@code localhost:6379}
 * @param properties the properties the address comes from
 */
record ConfiguredRedis(String address, String properties) {

	private static final String PREFIX = "spring.data.redis";

	private static final int DEFAULT_PORT = 6379;

	/**
	 * Reads the {@code spring.data.redis.*} properties of an environment.
	 * @param environment the environment
	 * @return the Redis they point at
	 */
	static ConfiguredRedis from(Environment environment) {
		DataRedisProperties redis = Binder.get(environment).bindOrCreate(PREFIX, DataRedisProperties.class);
		DataRedisProperties.Sentinel sentinel = redis.getSentinel();
		if (sentinel != null) {
			return new ConfiguredRedis(
					"the Sentinel nodes " + nodes(sentinel.getNodes()) + " (master '" + sentinel.getMaster() + "')",
					name("sentinel.nodes") + " and " + name("sentinel.master"));
		}
		DataRedisProperties.Cluster cluster = redis.getCluster();
		if (cluster != null) {
			return new ConfiguredRedis("the cluster nodes " + nodes(cluster.getNodes()), name("cluster.nodes"));
		}
		DataRedisProperties.Masterreplica masterReplica = redis.getMasterreplica();
		if (masterReplica != null) {
			return new ConfiguredRedis("the master/replica nodes " + nodes(masterReplica.getNodes()),
					name("masterreplica.nodes"));
		}
		String url = redis.getUrl();
		if (url != null) {
			return new ConfiguredRedis(hostAndPort(url), name("url"));
		}
		boolean defaults = environment.getProperty(name("host")) == null
				&& environment.getProperty(name("port")) == null;
		return new ConfiguredRedis(redis.getHost() + ":" + redis.getPort(),
				name("host") + " and " + name("port") + (defaults ? " (both unset: the defaults)" : ""));
	}

	private static String name(String property) {
		return PREFIX + "." + property;
	}

	private static String nodes(List<String> nodes) {
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
