import LanternDatabase

/// Tables the event machinery needs inside each service's schema.
public enum EventMigrations {
    /// `outbox`: events written in the state change's transaction, published by `OutboxRelay`.
    /// `processed_events`: ids a consumer has handled, for idempotent handling of at-least-once delivery.
    public static let all: [Migration] = [
        Migration(id: "0000_lantern_events", sql: """
            CREATE TABLE {{schema}}.outbox (
                seq bigserial PRIMARY KEY,
                stream text NOT NULL,
                event_id uuid NOT NULL UNIQUE,
                payload text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE {{schema}}.processed_events (
                consumer text NOT NULL,
                event_id uuid NOT NULL,
                processed_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (consumer, event_id)
            );
            CREATE INDEX processed_events_age ON {{schema}}.processed_events (processed_at);
            """),
    ]
}
