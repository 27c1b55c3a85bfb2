package io.github.delayqueue.dashboard;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageDescriptor;
import io.github.delayqueue.store.Failures;
import io.github.delayqueue.store.ServerInspector;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.dao.DataAccessException;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The operators' web dashboard: one page and its scripts from the jar, and the JSON they
 * read, under a path of the application. The JSON comes from the operations of the
 * {@code delayqueue} endpoint (whether or not that endpoint is exposed), under the same
 * access: nothing with access {@code none}. Every response forbids inline scripts,
 * framing and content sniffing, so that no stored payload can run as code in an
 * operator's browser; the page itself only ever shows payloads as text.
 */
public final class DelayQueueDashboard implements AutoCloseable {

	/** Where the page and its scripts are in the jar. */
	static final String ASSETS = "io/github/delayqueue/dashboard/assets/";

	/**
	 * The Content-Security-Policy of every response: scripts, styles, images and requests
	 * only from the dashboard itself; no inline script, no plug-in, no form target, no
	 * framing by another page.
	 */
	public static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
			+ "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

	/** The largest body of an action: a few short fields. */
	static final int MAX_ACTION_BYTES = 16 * 1024;

	/** Reads waiting for Redis at once; a further one is answered 503 at once. */
	private static final int READ_THREADS = 4;

	/** The most a read leaves of the dashboard's timeout to answer with what it read. */
	private static final Duration MAX_MARGIN = Duration.ofMillis(500);

	private static final Log logger = LogFactory.getLog(DelayQueueDashboard.class);

	private final DelayQueueEndpoint endpoint;

	private final DashboardAccess access;

	private final String path;

	private final Duration timeout;

	private final ThreadPoolExecutor reads;

	private final Supplier<Map<String, Object>> meters;

	private Supplier<Map<String, Object>> dataLoss = Map::of;

	private final ServerInspector servers;

	/**
	 * Creates the dashboard; close it to stop its threads.
	 * @param endpoint the operations it reads through
	 * @param access what its users may do
	 * @param path where it is served, such as {@code /delay-queue}
	 * @param timeout the longest a request waits for Redis before answering 503
	 * @param meters the application's meters for the live charts, such as
	 * {@link DashboardMeters}; {@code available: false} without them
	 * @param servers what the Redis panel reads of the servers
	 */
	public DelayQueueDashboard(DelayQueueEndpoint endpoint, DashboardAccess access, String path, Duration timeout,
			Supplier<Map<String, Object>> meters, ServerInspector servers) {
		this.endpoint = endpoint;
		this.meters = meters;
		this.servers = servers;
		this.access = access;
		this.path = path;
		this.timeout = timeout;
		this.reads = new ThreadPoolExecutor(0, READ_THREADS, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
				daemonThreads());
	}

	/**
	 * Sets where the overview reads the last time Redis was found to have lost the
	 * queue's data, shown above the topics.
	 * @param dataLoss when and what ({@code noticedAt}, {@code message}), or an empty map
	 * for never
	 */
	public void setDataLoss(Supplier<Map<String, Object>> dataLoss) {
		this.dataLoss = dataLoss;
	}

	private static ThreadFactory daemonThreads() {
		AtomicInteger count = new AtomicInteger();
		return (task) -> {
			Thread thread = new Thread(task, "delay-queue-dashboard-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * The dashboard's routes, for Spring MVC.
	 * @return the routes
	 */
	public RouterFunction<ServerResponse> routes() {
		String lastSegment = this.path.substring(this.path.lastIndexOf('/') + 1);
		return RouterFunctions.route()
			.GET(this.path,
					(request) -> secured(ServerResponse.status(HttpStatus.FOUND))
						.header(HttpHeaders.LOCATION, lastSegment + "/")
						.build())
			.GET(this.path + "/", (request) -> page("index.html", MediaType.TEXT_HTML))
			.GET(this.path + "/assets/dashboard.js",
					(request) -> page("dashboard.js", MediaType.valueOf("text/javascript")))
			.GET(this.path + "/assets/dashboard.css", (request) -> page("dashboard.css", MediaType.valueOf("text/css")))
			.GET(this.path + "/api/access", (request) -> json(() -> Map.of("access", this.access.name())))
			.GET(this.path + "/api/overview", (request) -> json(this::overview))
			.GET(this.path + "/api/meters", (request) -> json(this.meters::get))
			.GET(this.path + "/api/redis", (request) -> json(this.servers::inspect))
			.GET(this.path + "/api/topic", (request) -> json(() -> topic(request)))
			.GET(this.path + "/api/message", (request) -> json(() -> message(request)))
			.POST(this.path + "/api/topic/actions", (request) -> action(request, this::topicAction))
			.POST(this.path + "/api/message/actions", (request) -> action(request, this::messageAction))
			.build();
	}

	private Map<String, Object> overview() {
		Map<String, Object> overview = new LinkedHashMap<>();
		overview.put("access", this.access.name());
		overview.put("queue", this.endpoint.queue(redisWait()));
		Map<String, Object> dataLoss = this.dataLoss.get();
		if (!dataLoss.isEmpty()) {
			overview.put("redisDataLost", dataLoss);
		}
		return overview;
	}

	private Object topic(ServerRequest request) {
		return this.endpoint.topic(required(request, "topic"), request.param("state").orElse(null),
				number(request, "offset", Long::valueOf), number(request, "limit", Integer::valueOf),
				request.param("group").filter((group) -> !group.isEmpty()).orElse(null), redisWait());
	}

	/**
	 * How long a read of the overview or a topic waits for Redis: a little less than the
	 * dashboard's timeout, so that what answered is shown and what did not is named
	 * before the request itself runs out of time.
	 */
	private Duration redisWait() {
		Duration margin = this.timeout.dividedBy(10);
		return this.timeout.minus((margin.compareTo(MAX_MARGIN) < 0) ? margin : MAX_MARGIN);
	}

	private Object message(ServerRequest request) {
		String topic = required(request, "topic");
		String id = required(request, "id");
		MessageDescriptor message = this.endpoint.message(topic, id);
		if (message == null) {
			throw new NotFoundException("Topic '" + topic + "' has no message with id '" + id + "'");
		}
		return message;
	}

	private Object topicAction(ServerRequest request, ActionRequest action) {
		return this.endpoint.topicAction(required(request, "topic"), action.requiredAction(), action.limit(),
				action.schedule(), action.group(), action.parsedDuration());
	}

	private Object messageAction(ServerRequest request, ActionRequest action) {
		return this.endpoint.messageAction(required(request, "topic"), required(request, "id"), action.requiredAction(),
				action.parsedDelay());
	}

	/**
	 * Runs a state-changing request: only from the dashboard's own page, and only with
	 * the endpoint's unrestricted access.
	 */
	private ServerResponse action(ServerRequest request, BiFunction<ServerRequest, ActionRequest, Object> act) {
		String refusal = CrossSiteRequestGuard.refusal(request);
		if (refusal != null) {
			return error(HttpStatus.FORBIDDEN, refusal);
		}
		if (!this.access.canWrite()) {
			return error(HttpStatus.FORBIDDEN, "The dashboard is read-only: the delayqueue endpoint's access is "
					+ this.access.name() + " (management.endpoint.delayqueue.access=unrestricted allows actions)");
		}
		long length = request.headers().contentLength().orElse(-1);
		if (length < 0) {
			return error(HttpStatus.LENGTH_REQUIRED, "A dashboard action must give its Content-Length");
		}
		if (length > MAX_ACTION_BYTES) {
			return error(HttpStatus.valueOf(413),
					"A dashboard action's body must be at most " + MAX_ACTION_BYTES + " bytes, but was " + length);
		}
		ActionRequest action;
		try {
			action = request.body(ActionRequest.class);
		}
		catch (Exception ex) {
			return error(HttpStatus.BAD_REQUEST, "The body must be JSON such as {\"action\":\"cancel\"}");
		}
		return answer(() -> act.apply(request, action));
	}

	private static String required(ServerRequest request, String name) {
		return request.param(name)
			.filter((value) -> !value.isEmpty())
			.orElseThrow(() -> new InvalidEndpointRequestException("The parameter '" + name + "' is missing",
					"Missing " + name));
	}

	private static <T> @Nullable T number(ServerRequest request, String name, Function<String, T> parse) {
		String value = request.param(name).orElse(null);
		if (value == null || value.isEmpty()) {
			return null;
		}
		try {
			return parse.apply(value);
		}
		catch (NumberFormatException ex) {
			throw new InvalidEndpointRequestException(name + " must be a whole number, but was '" + value + "'",
					"Bad " + name);
		}
	}

	private ServerResponse page(String name, MediaType type) {
		Resource resource = new ClassPathResource(ASSETS + name, DelayQueueDashboard.class.getClassLoader());
		return secured(ServerResponse.ok()).contentType(type).cacheControl(CacheControl.noCache()).body(resource);
	}

	/** Reads JSON through the endpoint, waiting for Redis at most the timeout. */
	private ServerResponse json(Supplier<Object> read) {
		if (!this.access.canRead()) {
			return error(HttpStatus.FORBIDDEN,
					"The delayqueue endpoint's access is none (management.endpoint.delayqueue.access)");
		}
		return answer(() -> withinTimeout(read));
	}

	private ServerResponse answer(Supplier<Object> operation) {
		try {
			Object body = operation.get();
			return secured(ServerResponse.ok()).cacheControl(CacheControl.noStore())
				.contentType(MediaType.APPLICATION_JSON)
				.body(body);
		}
		catch (InvalidEndpointRequestException ex) {
			return error(HttpStatus.BAD_REQUEST, ex.getMessage());
		}
		catch (NotFoundException ex) {
			return error(HttpStatus.NOT_FOUND, ex.getMessage());
		}
		catch (RedisWaitException ex) {
			logger.warn("Dashboard: " + ex.getMessage());
			return error(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
		}
		catch (DataAccessException ex) {
			String cause = Failures.describe(ex);
			logger.warn("Dashboard: Redis could not be read: " + cause);
			logger.debug("Dashboard: Redis could not be read", ex);
			return error(HttpStatus.SERVICE_UNAVAILABLE, "Redis could not be read: " + cause);
		}
	}

	/**
	 * Runs a read on one of the dashboard's threads, so that a request never waits for
	 * Redis longer than the timeout, whatever the Redis client's own timeout is.
	 */
	private Object withinTimeout(Supplier<Object> read) {
		Future<Object> future;
		try {
			future = this.reads.submit(read::get);
		}
		catch (RejectedExecutionException ex) {
			throw new RedisWaitException("Earlier dashboard requests are still waiting for Redis");
		}
		try {
			return future.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw new RedisWaitException(
					"Redis did not answer within " + this.timeout.toMillis() + " ms (delay-queue.dashboard.timeout)");
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			future.cancel(true);
			Thread.currentThread().interrupt();
			throw new RedisWaitException("Interrupted while waiting for Redis");
		}
	}

	/**
	 * Stops the threads that read Redis for the dashboard; a read still waiting is
	 * interrupted.
	 */
	@Override
	public void close() {
		this.reads.shutdownNow();
	}

	private static ServerResponse error(HttpStatus status, @Nullable String message) {
		return secured(ServerResponse.status(status)).cacheControl(CacheControl.noStore())
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("error", (message != null) ? message : status.getReasonPhrase()));
	}

	private static ServerResponse.BodyBuilder secured(ServerResponse.BodyBuilder response) {
		return response.header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
			.header("X-Content-Type-Options", "nosniff")
			.header("X-Frame-Options", "DENY")
			.header("Referrer-Policy", "no-referrer");
	}

	/** Redis did not answer a read in time, or too many reads wait for it already. */
	private static final class RedisWaitException extends RuntimeException {

		RedisWaitException(String message) {
			super(message);
		}

	}

	/** A message asked for by id that the topic does not have. */
	private static final class NotFoundException extends RuntimeException {

		NotFoundException(String message) {
			super(message);
		}

	}

}
