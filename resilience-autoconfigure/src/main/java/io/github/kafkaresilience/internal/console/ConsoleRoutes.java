package io.github.kafkaresilience.internal.console;

import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Serves the operator's console: one self-contained page (HTML, a script and a style
 * sheet from this jar, nothing from elsewhere) at {@code path}, and its settings at
 * {@code path/settings}: where the {@code kafkaresilience} endpoint is, whether actions
 * are enabled, and the CSRF token the page sends with its actions when Spring Security
 * gives one. Everything the page shows and does goes through that endpoint, so Actuator's
 * exposure and the application's security rules apply to it as to any client.
 *
 * @since 0.1.0
 */
public final class ConsoleRoutes {

	private static final String ASSETS = "io/github/kafkaresilience/console/";

	/**
	 * What the page may load and do: its own files only, nothing inline, no plugins, no
	 * base URL of its own, forms only to itself, and no framing.
	 */
	static final String CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; object-src 'none'; "
			+ "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

	/** The request attribute under which Spring Security's CSRF filter puts its token. */
	private static final String CSRF_ATTRIBUTE = "_csrf";

	private ConsoleRoutes() {
	}

	/**
	 * The console's routes.
	 * @param path where the page is served: {@code /} and no trailing {@code /}
	 * @param endpointPath the web path of the {@code kafkaresilience} endpoint
	 * @param actionsEnabled whether the page offers actions
	 */
	public static RouterFunction<ServerResponse> routes(String path, String endpointPath, boolean actionsEnabled) {
		ClassPathResource page = new ClassPathResource(ASSETS + "index.html");
		return RouterFunctions.route()
			.GET(path, (request) -> ServerResponse.status(302).header("Location", path + "/").build())
			.GET(path + "/",
					(request) -> ServerResponse.ok()
						.contentType(MediaType.TEXT_HTML)
						.cacheControl(CacheControl.noStore())
						.header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
						.body(page))
			.GET(path + "/settings",
					(request) -> ServerResponse.ok()
						.contentType(MediaType.APPLICATION_JSON)
						.cacheControl(CacheControl.noStore())
						.body(settings(request, endpointPath, actionsEnabled)))
			.add(RouterFunctions.resources(path + "/assets/**", new ClassPathResource(ASSETS + "assets/")))
			.build();
	}

	private static Map<String, Object> settings(ServerRequest request, String endpointPath, boolean actionsEnabled) {
		Map<String, Object> settings = new LinkedHashMap<>();
		settings.put("endpoint", request.requestPath().contextPath().value() + endpointPath);
		settings.put("actionsEnabled", actionsEnabled);
		settings.put("csrf", csrf(request.attribute(CSRF_ATTRIBUTE).orElse(null)));
		return settings;
	}

	/**
	 * The header and token of Spring Security's {@code CsrfToken}, read by name so that
	 * Spring Security stays optional; {@code null} without one.
	 */
	private static @Nullable Map<String, String> csrf(@Nullable Object token) {
		if (token == null) {
			return null;
		}
		try {
			// through the public interface: the token itself may be of a private class
			Class<?> type = Class.forName("org.springframework.security.web.csrf.CsrfToken", false,
					token.getClass().getClassLoader());
			Method header = type.getMethod("getHeaderName");
			Method value = type.getMethod("getToken");
			return Map.of("header", (String) header.invoke(token), "token", (String) value.invoke(token));
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			throw new IllegalStateException("Could not read the CSRF token of this request", ex);
		}
	}

}
