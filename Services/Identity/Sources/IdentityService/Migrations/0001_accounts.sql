-- Accounts of all five apps. An account belongs to one app; its sign-in methods are its credentials.
CREATE TABLE {{schema}}.users (
    id uuid PRIMARY KEY,
    app text NOT NULL CHECK (app IN ('luckyday', 'pairly', 'astrosvitla', 'roastmelater', 'symbi')),
    display_name text,
    email text,
    time_zone text,
    locale text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

-- (app, method, subject) finds the account. Device subjects are SHA-256 hashes of the device secret.
CREATE TABLE {{schema}}.credentials (
    app text NOT NULL,
    method text NOT NULL CHECK (method IN ('device', 'google', 'apple')),
    subject text NOT NULL,
    user_id uuid NOT NULL REFERENCES {{schema}}.users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (app, method, subject)
);
CREATE INDEX credentials_user ON {{schema}}.credentials (user_id);

CREATE TABLE {{schema}}.sessions (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES {{schema}}.users (id) ON DELETE CASCADE,
    app text NOT NULL,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    revoked_at timestamptz,
    revoked_reason text
);
CREATE INDEX sessions_user ON {{schema}}.sessions (user_id);

-- Every refresh token ever issued for a session, hashed; a spent one presented again revokes the session.
CREATE TABLE {{schema}}.refresh_tokens (
    hash bytea PRIMARY KEY,
    session_id uuid NOT NULL REFERENCES {{schema}}.sessions (id) ON DELETE CASCADE,
    issued_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    spent_at timestamptz
);
CREATE INDEX refresh_tokens_session ON {{schema}}.refresh_tokens (session_id);

CREATE TABLE {{schema}}.devices (
    user_id uuid NOT NULL REFERENCES {{schema}}.users (id) ON DELETE CASCADE,
    device_id text NOT NULL,
    app text NOT NULL,
    platform text NOT NULL CHECK (platform IN ('ios', 'android')),
    push_token text NOT NULL,
    locale text,
    time_zone text,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, device_id)
);
CREATE INDEX devices_push_token ON {{schema}}.devices (app, push_token);

-- The Ed25519 seed that signs access tokens when IDENTITY_SIGNING_KEY is not configured.
CREATE TABLE {{schema}}.signing_keys (
    kid text PRIMARY KEY,
    seed bytea NOT NULL,
    created_at timestamptz NOT NULL
);
