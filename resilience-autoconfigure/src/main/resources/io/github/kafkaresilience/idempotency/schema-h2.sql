-- The table of the JDBC idempotency store (kafka.resilience.idempotency). One row per
-- listener (scope) and idempotency key; the primary key decides which of two racing
-- attempts claims a key. updated_at is epoch milliseconds.
CREATE TABLE IF NOT EXISTS kafka_resilience_idempotency (
    scope VARCHAR(200) NOT NULL,
    idempotency_key VARCHAR(500) NOT NULL,
    state VARCHAR(10) NOT NULL,
    token VARCHAR(36) NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT kafka_resilience_idempotency_pk PRIMARY KEY (scope, idempotency_key)
);
CREATE INDEX IF NOT EXISTS kafka_resilience_idempotency_age ON kafka_resilience_idempotency (updated_at);
