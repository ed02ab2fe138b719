package io.github.kafkaresilience.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.github.kafkaresilience.internal.actuate.ValueDisclosure;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

/**
 * The operator's console and the actions of the {@code kafkaresilience} endpoint
 * ({@code kafka.resilience.console.*}): a page served by the application over the
 * endpoint's JSON API, off unless enabled, and read-only unless actions are enabled; what
 * of dead letters it shows, and how much it reads for one request.
 *
 * @since 0.1.0
 */
public class ConsoleProperties {

	/**
	 * Whether the application serves the console page (needs a servlet web application
	 * and the kafkaresilience endpoint exposed over the web).
	 */
	private boolean enabled;

	/** Where the console page is served. */
	@Pattern(regexp = "/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]", message = "must start with '/' and not end with '/'")
	private String path = "/kafka-resilience";

	/**
	 * Whether the endpoint (and the console) may act: retry now, dead-letter now, pause,
	 * resume and a replay that sends. Off, every action is refused with 403 and the
	 * console is read-only.
	 */
	private boolean actionsEnabled;

	/**
	 * Whether actions may be enabled without Spring Security on the class path, open to
	 * anyone who reaches the endpoint. Without it, actions-enabled without Spring
	 * Security fails startup.
	 */
	private boolean allowAnonymousActions;

	/**
	 * The role an action needs when Spring Security is present (without the ROLE_
	 * prefix).
	 */
	@NotBlank
	private String role = "KAFKA_RESILIENCE_OPERATOR";

	/** The most held keys or dead letters one page of the API returns. */
	@Min(1)
	@Max(1000)
	private int maxPageSize = 200;

	/**
	 * The most records one listing of dead letters or one replay dry run reads; it stops
	 * there and says where.
	 */
	@Min(1)
	private long scanLimit = 10_000;

	/**
	 * When dead letters' values and the application's headers are shown: never,
	 * when-authorized (to a caller with the role, with Spring Security) or always.
	 */
	@NotNull
	private ShowValues showValues = ShowValues.WHEN_AUTHORIZED;

	/**
	 * Names of dead letters' headers whose values are never shown, ignoring case; '*'
	 * stands for any characters. The list replaces the default: authorization, cookie,
	 * set-cookie, proxy-authorization, *token*, *secret*, *password*, *api-key*.
	 */
	@NotNull
	private List<String> maskedHeaders = new ArrayList<>(ValueDisclosure.DEFAULT_MASKED_HEADERS);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getPath() {
		return this.path;
	}

	public void setPath(String path) {
		this.path = path;
	}

	public boolean isActionsEnabled() {
		return this.actionsEnabled;
	}

	public void setActionsEnabled(boolean actionsEnabled) {
		this.actionsEnabled = actionsEnabled;
	}

	public boolean isAllowAnonymousActions() {
		return this.allowAnonymousActions;
	}

	public void setAllowAnonymousActions(boolean allowAnonymousActions) {
		this.allowAnonymousActions = allowAnonymousActions;
	}

	public String getRole() {
		return this.role;
	}

	public void setRole(String role) {
		this.role = role;
	}

	public int getMaxPageSize() {
		return this.maxPageSize;
	}

	public void setMaxPageSize(int maxPageSize) {
		this.maxPageSize = maxPageSize;
	}

	public long getScanLimit() {
		return this.scanLimit;
	}

	public void setScanLimit(long scanLimit) {
		this.scanLimit = scanLimit;
	}

	public ShowValues getShowValues() {
		return this.showValues;
	}

	public void setShowValues(ShowValues showValues) {
		this.showValues = showValues;
	}

	public List<String> getMaskedHeaders() {
		return this.maskedHeaders;
	}

	public void setMaskedHeaders(List<String> maskedHeaders) {
		this.maskedHeaders = maskedHeaders;
	}

}
