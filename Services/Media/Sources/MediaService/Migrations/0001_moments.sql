-- media keeps its own copy of what it needs from identity, fed by identity's events (it never reads identity's
-- tables): who is paired with whom, and display names for "sent by".
CREATE TABLE {{schema}}.partners (
    user_id uuid PRIMARY KEY,
    partner_id uuid NOT NULL,
    pairing_id uuid NOT NULL
);

CREATE TABLE {{schema}}.names (
    user_id uuid PRIMARY KEY,
    display_name text NOT NULL
);

-- The one current photo per receiver: a new one replaces it. There is no history by design.
CREATE TABLE {{schema}}.moments (
    receiver_id uuid PRIMARY KEY,
    id uuid NOT NULL UNIQUE,
    sender_id uuid NOT NULL,
    storage_key text NOT NULL,
    content_type text NOT NULL,
    byte_size integer NOT NULL,
    width integer NOT NULL,
    height integer NOT NULL,
    etag text NOT NULL,
    sent_at timestamptz NOT NULL
);
CREATE INDEX moments_sender ON {{schema}}.moments (sender_id);

-- Idempotency-Key of uploads: the same key and body give the same moment, once.
CREATE TABLE {{schema}}.upload_keys (
    sender_id uuid NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    moment_id uuid NOT NULL,
    sent_at timestamptz NOT NULL,
    PRIMARY KEY (sender_id, key)
);
CREATE INDEX upload_keys_age ON {{schema}}.upload_keys (sent_at);
