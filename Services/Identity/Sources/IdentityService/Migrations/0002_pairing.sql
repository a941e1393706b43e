-- Pairly invite codes. Kept after use or expiry (for a week) so a wrong code gets the right explanation.
CREATE TABLE {{schema}}.pairing_invites (
    code text PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES {{schema}}.users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    used_by uuid
);
CREATE INDEX pairing_invites_user ON {{schema}}.pairing_invites (user_id, expires_at);

-- A pairing is two rows, one per partner, so "who is my partner" is one primary-key lookup and a user can
-- never be in two pairings. Deleting either user removes both rows.
CREATE TABLE {{schema}}.partners (
    user_id uuid PRIMARY KEY REFERENCES {{schema}}.users (id) ON DELETE CASCADE,
    partner_id uuid NOT NULL UNIQUE REFERENCES {{schema}}.users (id) ON DELETE CASCADE,
    pairing_id uuid NOT NULL,
    since timestamptz NOT NULL
);
