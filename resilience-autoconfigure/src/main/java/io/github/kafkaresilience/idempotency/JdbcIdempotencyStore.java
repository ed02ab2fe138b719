package io.github.kafkaresilience.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * An {@link IdempotencyStore} in one database table, shared by every instance. The
 * table's primary key {@code (scope, idempotency_key)} decides races: of two attempts
 * that insert a claim at once, the database lets one through. Completing a claim is an
 * update that joins the caller's transaction, so it commits or rolls back with the
 * handler's own writes.
 * <p>
 * The schema scripts ship in this package ({@code schema-<platform>.sql}). Times are
 * epoch milliseconds of the instances' clocks; keep them in sync (NTP) to well under the
 * lease. Keys longer than {@value #MAX_KEY_LENGTH} characters are stored as their
 * SHA-256.
 *
 * @since 0.1.0
 */
public class JdbcIdempotencyStore implements IdempotencyStore {

	/** The table, as the shipped schema scripts create it. */
	public static final String TABLE = "kafka_resilience_idempotency";

	/** The longest key stored as it is. */
	public static final int MAX_KEY_LENGTH = 500;

	private static final String CLAIMED = "CLAIMED";

	private static final String COMPLETED = "COMPLETED";

	private static final String INSERT = "INSERT INTO " + TABLE
			+ " (scope, idempotency_key, state, token, updated_at) VALUES (?, ?, 'CLAIMED', ?, ?)";

	private static final String SELECT = "SELECT state, token, updated_at FROM " + TABLE
			+ " WHERE scope = ? AND idempotency_key = ?";

	private static final String TAKE_OVER = "UPDATE " + TABLE
			+ " SET token = ?, updated_at = ? WHERE scope = ? AND idempotency_key = ? AND state = 'CLAIMED' AND token = ?";

	private static final String COMPLETE = "UPDATE " + TABLE
			+ " SET state = 'COMPLETED', updated_at = ? WHERE scope = ? AND idempotency_key = ? AND state = 'CLAIMED' AND token = ?";

	private static final String RELEASE = "DELETE FROM " + TABLE
			+ " WHERE scope = ? AND idempotency_key = ? AND state = 'CLAIMED' AND token = ?";

	private static final String EXPIRE = "DELETE FROM " + TABLE + " WHERE updated_at < ?";

	private final JdbcOperations jdbc;

	private final Clock clock;

	public JdbcIdempotencyStore(JdbcOperations jdbc) {
		this(jdbc, Clock.systemUTC());
	}

	public JdbcIdempotencyStore(JdbcOperations jdbc, Clock clock) {
		this.jdbc = jdbc;
		this.clock = clock;
	}

	@Override
	public Claim claim(String scope, String key, Duration lease) {
		String stored = stored(key);
		// a row can disappear (released, expired) or be taken over between the
		// statements:
		// look again, a few times, until one of them sees a stable state
		for (int round = 0; round < 5; round++) {
			long now = this.clock.millis();
			String token = UUID.randomUUID().toString();
			try {
				this.jdbc.update(INSERT, scope, stored, token, now);
				return Claim.claimed(scope, key, token, Instant.ofEpochMilli(now));
			}
			catch (DuplicateKeyException ex) {
				// claimed or completed before: see which
			}
			List<Row> rows = this.jdbc.query(SELECT,
					(rs, n) -> new Row(rs.getString(1), rs.getString(2), rs.getLong(3)), scope, stored);
			if (rows.isEmpty()) {
				continue;
			}
			Row row = rows.get(0);
			if (COMPLETED.equals(row.state())) {
				return Claim.completed(scope, key, Instant.ofEpochMilli(row.updatedAt()));
			}
			if (row.updatedAt() + lease.toMillis() > now) {
				return Claim.held(scope, key, Instant.ofEpochMilli(row.updatedAt()));
			}
			if (this.jdbc.update(TAKE_OVER, token, now, scope, stored, row.token()) == 1) {
				return Claim.claimed(scope, key, token, Instant.ofEpochMilli(now));
			}
		}
		throw new IllegalStateException("Could not claim idempotency key '" + key + "' of '" + scope + "': its row in "
				+ TABLE + " kept changing");
	}

	@Override
	public void complete(Claim claim) {
		String token = claim.requireToken();
		if (this.jdbc.update(COMPLETE, this.clock.millis(), claim.scope(), stored(claim.key()), token) != 1) {
			throw new ClaimLostException(claim);
		}
	}

	@Override
	public void release(Claim claim) {
		this.jdbc.update(RELEASE, claim.scope(), stored(claim.key()), claim.requireToken());
	}

	@Override
	public int expire(Instant before) {
		return this.jdbc.update(EXPIRE, before.toEpochMilli());
	}

	private static String stored(String key) {
		if (key.length() <= MAX_KEY_LENGTH) {
			return key;
		}
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
			return "sha256:" + HexFormat.of().formatHex(hash);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}

	private record Row(String state, String token, long updatedAt) {
	}

}
