-- Users erased by `user.deleted`, by a SHA-256 of their id (ErasedUsers): gamification's events about a user that
-- are still on their way when the account goes (a streak, a reward) are dropped instead of bringing the user's
-- streak copy or reward back. Kept 30 days, beyond any stream's retention.
CREATE TABLE {{schema}}.erased_users (
    user_hash bytea       PRIMARY KEY,
    erased_at timestamptz NOT NULL
);
