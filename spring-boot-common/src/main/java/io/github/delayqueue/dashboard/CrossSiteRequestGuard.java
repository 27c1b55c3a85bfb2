package io.github.delayqueue.dashboard;

import java.net.URI;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * Refuses a state-changing request that another site could have made an operator's
 * browser send. Such a request must carry the dashboard's own header (which a cross-site
 * form cannot set, and a cross-site script cannot without a CORS permission the dashboard
 * never gives), a JSON body, and come from the dashboard's own origin as far as the
 * browser tells: {@code Sec-Fetch-Site} must be {@code same-origin} when sent; a browser
 * too old to send it must name, in {@code Origin}, the host the request went to (the
 * scheme and port are not compared, so that a proxy in front that ends TLS changes
 * nothing).
 */
final class CrossSiteRequestGuard {

	/** The header every state-changing request of the page carries. */
	static final String HEADER = "X-Delay-Queue-Dashboard";

	private CrossSiteRequestGuard() {
	}

	/**
	 * Why a request is refused.
	 * @param request the request
	 * @return the reason, or {@code null} if it may go on
	 */
	static @Nullable String refusal(ServerRequest request) {
		HttpHeaders headers = request.headers().asHttpHeaders();
		if (!"1".equals(headers.getFirst(HEADER))) {
			return "Refused: a dashboard action must carry the header " + HEADER + ": 1";
		}
		if (!json(headers)) {
			return "Refused: a dashboard action must send JSON (Content-Type: application/json)";
		}
		String fetchSite = headers.getFirst("Sec-Fetch-Site");
		if (fetchSite != null && !fetchSite.equals("same-origin")) {
			return "Refused: a cross-site request (Sec-Fetch-Site: " + fetchSite + ")";
		}
		String origin = headers.getFirst(HttpHeaders.ORIGIN);
		if (fetchSite == null && origin != null && !sameHost(origin, request.uri())) {
			return "Refused: a cross-site request (Origin: " + origin + ")";
		}
		return null;
	}

	/** Exactly {@code application/json}, whatever its parameters: no wildcard. */
	private static boolean json(HttpHeaders headers) {
		try {
			MediaType contentType = headers.getContentType();
			return contentType != null && MediaType.APPLICATION_JSON.equalsTypeAndSubtype(contentType);
		}
		catch (InvalidMediaTypeException ex) {
			return false;
		}
	}

	private static boolean sameHost(String origin, URI target) {
		String host;
		try {
			host = URI.create(origin).getHost();
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
		return host != null && host.equalsIgnoreCase(target.getHost());
	}

}
