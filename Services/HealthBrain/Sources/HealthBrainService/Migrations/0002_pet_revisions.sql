-- Every write of a pet bumps its revision: an upload reads the pet, its raw rows and days in one statement, decides,
-- and writes everything in one statement conditional on the revision it read (re-deciding when another write came
-- first), so the common write is two round trips instead of a locked transaction of ten.
ALTER TABLE {{schema}}.pets ADD COLUMN revision bigint NOT NULL DEFAULT 0;

-- Users erased by `user.deleted`, as a SHA-256 of the id (not the id): an access token outlives its account by up to
-- its lifetime, and an upload with it must not bring the pet back. Kept 30 days (housekeeping).
CREATE TABLE {{schema}}.erased_users (
    user_hash bytea       PRIMARY KEY,
    erased_at timestamptz NOT NULL
);
