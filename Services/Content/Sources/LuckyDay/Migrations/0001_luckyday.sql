-- Lucky Day: the profile's derived descriptors and texts (never the birth date, time or place), the fortunes
-- revealed, the next fortune made ahead, and the schedules of pre-generation and "cookie ready" reminders.

CREATE TABLE {{schema}}.luckyday_profiles (
    user_id           uuid PRIMARY KEY,
    -- Goes up with every edit of the birth data; a fortune made ahead for an older version is thrown away.
    version           integer NOT NULL,
    -- The device's IANA time zone: local dates of fortunes, the reminder's quiet hours.
    time_zone         text NOT NULL,
    birth_time_known  boolean NOT NULL,
    zodiac_animal     text NOT NULL,
    year_element      text NOT NULL,
    day_master        text NOT NULL,
    -- [{role, meaning, stem, stemHanzi, branch, branchHanzi, animal, stemElement, branchElement, polarity, assumed, poem}]
    pillars           jsonb NOT NULL,
    elements          jsonb NOT NULL,
    nickname          text NOT NULL,
    essence           text[] NOT NULL,
    texts_artisanal   boolean NOT NULL,
    limitations       text[] NOT NULL,
    -- Hand-written fortunes this user has been given: the next one is their permutation's entry at this count.
    artisanal_used    integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);

CREATE TABLE {{schema}}.fortunes (
    id              uuid PRIMARY KEY,
    user_id         uuid NOT NULL,
    text            text NOT NULL,
    -- SHA-256 of the text: the same words are never given to one user twice.
    text_hash       bytea NOT NULL,
    artisanal       boolean NOT NULL,
    source          text NOT NULL,
    revealed_at     timestamptz NOT NULL,
    opens_again_at  timestamptz NOT NULL,
    idempotency_key text,
    UNIQUE (user_id, text_hash)
);
CREATE INDEX fortunes_latest ON {{schema}}.fortunes (user_id, revealed_at DESC);
CREATE UNIQUE INDEX fortunes_idempotency ON {{schema}}.fortunes (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- The next fortune, made ahead so breaking the cookie is instant.
CREATE TABLE {{schema}}.next_fortunes (
    user_id          uuid PRIMARY KEY,
    text             text NOT NULL,
    artisanal        boolean NOT NULL,
    source           text NOT NULL,
    -- The hand-written fortune's place in the user's permutation, when it is one (counted when revealed).
    pool_position    integer,
    profile_version  integer NOT NULL,
    -- The local date it was written for (its day's descriptors); another day's fortune is written afresh.
    for_date         date NOT NULL,
    generated_at     timestamptz NOT NULL
);

-- Users whose next fortune is to be made; a worker leases rows so replicas share the work.
CREATE TABLE {{schema}}.pregeneration (
    user_id       uuid PRIMARY KEY,
    due_at        timestamptz NOT NULL,
    leased_until  timestamptz
);
CREATE INDEX pregeneration_due ON {{schema}}.pregeneration (due_at);

-- One pending "cookie ready" reminder per user; sending it deletes the row in the transaction of its push job.
CREATE TABLE {{schema}}.reminders (
    user_id  uuid PRIMARY KEY,
    due_at   timestamptz NOT NULL
);
CREATE INDEX reminders_due ON {{schema}}.reminders (due_at);
