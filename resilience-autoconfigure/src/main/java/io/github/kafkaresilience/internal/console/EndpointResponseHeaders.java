package io.github.kafkaresilience.internal.console;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The headers of the responses of the {@code kafkaresilience} endpoint and the console
 * that an Actuator operation cannot set itself: {@code X-Content-Type-Options: nosniff}
 * on each (Spring Security adds it too when present; this filter adds it without), and
 * {@code Retry-After} on a 429, which the endpoint answers while another read of the same
 * ladder runs.
 *
 * @since 0.1.0
 */
public final class EndpointResponseHeaders extends OncePerRequestFilter {

	/** How many seconds a 429 asks the caller to wait before it asks again. */
	public static final int RETRY_AFTER_SECONDS = 5;

	private static final int TOO_MANY_REQUESTS = 429;

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		response.setHeader("X-Content-Type-Options", "nosniff");
		chain.doFilter(request, new RetryAfterOnTooManyRequests(response));
	}

	/** Adds {@code Retry-After} when the status is set to 429. */
	private static final class RetryAfterOnTooManyRequests extends HttpServletResponseWrapper {

		RetryAfterOnTooManyRequests(HttpServletResponse response) {
			super(response);
		}

		@Override
		public void setStatus(int status) {
			retryAfter(status);
			super.setStatus(status);
		}

		@Override
		public void sendError(int status) throws IOException {
			retryAfter(status);
			super.sendError(status);
		}

		@Override
		public void sendError(int status, String message) throws IOException {
			retryAfter(status);
			super.sendError(status, message);
		}

		private void retryAfter(int status) {
			if (status == TOO_MANY_REQUESTS && !containsHeader(HttpHeaders.RETRY_AFTER)) {
				setHeader(HttpHeaders.RETRY_AFTER, Integer.toString(RETRY_AFTER_SECONDS));
			}
		}

	}

}
