package io.github.delayqueue.dashboard;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageDescriptor;
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
public final class DelayQueueDashboard {

	/** Where the page and its scripts are in the jar. */
	static final String ASSETS = "io/github/delayqueue/dashboard/assets/";

	/**
	 * The Content-Security-Policy of every response: scripts, styles, images and requests
	 * only from the dashboard itself; no inline script, no plug-in, no form target, no
	 * framing by another page.
	 */
	public static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
			+ "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

	private static final Log logger = LogFactory.getLog(DelayQueueDashboard.class);

	private final DelayQueueEndpoint endpoint;

	private final DashboardAccess access;

	private final String path;

	/**
	 * Creates the dashboard.
	 * @param endpoint the operations it reads through
	 * @param access what its users may do
	 * @param path where it is served, such as {@code /delay-queue}
	 */
	public DelayQueueDashboard(DelayQueueEndpoint endpoint, DashboardAccess access, String path) {
		this.endpoint = endpoint;
		this.access = access;
		this.path = path;
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
			.GET(this.path + "/api/topics/{topic}", (request) -> json(() -> topic(request)))
			.GET(this.path + "/api/topics/{topic}/messages/{id}", (request) -> json(() -> message(request)))
			.POST(this.path + "/api/topics/{topic}/actions", (request) -> action(request, this::topicAction))
			.POST(this.path + "/api/topics/{topic}/messages/{id}/actions",
					(request) -> action(request, this::messageAction))
			.build();
	}

	private Map<String, Object> overview() {
		Map<String, Object> overview = new LinkedHashMap<>();
		overview.put("access", this.access.name());
		overview.put("queue", this.endpoint.queue());
		return overview;
	}

	private Object topic(ServerRequest request) {
		return this.endpoint.topic(request.pathVariable("topic"), request.param("state").orElse(null),
				number(request, "offset", Long::valueOf), number(request, "limit", Integer::valueOf));
	}

	private Object message(ServerRequest request) {
		String topic = request.pathVariable("topic");
		String id = request.pathVariable("id");
		MessageDescriptor message = this.endpoint.message(topic, id);
		if (message == null) {
			throw new NotFoundException("Topic '" + topic + "' has no message with id '" + id + "'");
		}
		return message;
	}

	private Object topicAction(ServerRequest request, ActionRequest action) {
		return this.endpoint.topicAction(request.pathVariable("topic"), action.requiredAction(), action.limit());
	}

	private Object messageAction(ServerRequest request, ActionRequest action) {
		return this.endpoint.messageAction(request.pathVariable("topic"), request.pathVariable("id"),
				action.requiredAction(), action.parsedDelay());
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
		ActionRequest action;
		try {
			action = request.body(ActionRequest.class);
		}
		catch (Exception ex) {
			return error(HttpStatus.BAD_REQUEST, "The body must be JSON such as {\"action\":\"cancel\"}");
		}
		return json(() -> act.apply(request, action));
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

	private ServerResponse json(Supplier<Object> read) {
		if (!this.access.canRead()) {
			return error(HttpStatus.FORBIDDEN,
					"The delayqueue endpoint's access is none (management.endpoint.delayqueue.access)");
		}
		try {
			Object body = read.get();
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
		catch (DataAccessException ex) {
			logger.warn("Dashboard: Redis could not be read", ex);
			return error(HttpStatus.SERVICE_UNAVAILABLE, "Redis could not be read: " + ex.getMessage());
		}
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

	/** A message asked for by id that the topic does not have. */
	private static final class NotFoundException extends RuntimeException {

		NotFoundException(String message) {
			super(message);
		}

	}

}
