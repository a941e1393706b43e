-- gamification's schema: streaks, the check-ins kept for their idempotency keys, counters and the sets behind
-- them, badges and rewards. Every table is per (user, app); deleting a user deletes their rows in each.

-- One row per user and app: the streak's state (StreakState as JSON, written whole under a version check),
-- where the user is now and the reminder plan.
CREATE TABLE {{schema}}.streaks (
    user_id    uuid        NOT NULL,
    app        text        NOT NULL,
    state      jsonb       NOT NULL,
    version    bigint      NOT NULL,
    zone       text        NOT NULL,
    reminders  boolean     NOT NULL DEFAULT true,
    -- When the next streak reminder is due (22:00 local on the day the streak is at risk); null: none planned.
    remind_at  timestamptz,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, app)
);
CREATE INDEX streaks_remind_at ON {{schema}}.streaks (remind_at) WHERE remind_at IS NOT NULL;

-- Check-ins by Idempotency-Key, with the answer given, kept 8 days (a check-in may be 72 hours late).
CREATE TABLE {{schema}}.check_ins (
    user_id         uuid        NOT NULL,
    app             text        NOT NULL,
    idempotency_key text        NOT NULL,
    occurred_at     timestamptz NOT NULL,
    zone            text        NOT NULL,
    local_date      date        NOT NULL,
    counted         boolean     NOT NULL,
    result          jsonb       NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (user_id, app, idempotency_key)
);
CREATE INDEX check_ins_created_at ON {{schema}}.check_ins (created_at);

-- Counters of the catalogues' rules: events counted, or members of a set (`subject`: a group such as a
-- collection, '' otherwise); `size` is a group's size for "complete" rules.
CREATE TABLE {{schema}}.counters (
    user_id uuid   NOT NULL,
    app     text   NOT NULL,
    metric  text   NOT NULL,
    subject text   NOT NULL,
    value   bigint NOT NULL,
    size    integer,
    PRIMARY KEY (user_id, app, metric, subject)
);

-- The members behind "distinct" and "complete" counters (categories tried, roasts favourited, scenarios done).
CREATE TABLE {{schema}}.counter_members (
    user_id uuid NOT NULL,
    app     text NOT NULL,
    metric  text NOT NULL,
    subject text NOT NULL,
    member  text NOT NULL,
    PRIMARY KEY (user_id, app, metric, subject, member)
);

-- Badges earned: once per user, app, badge and subject.
CREATE TABLE {{schema}}.badges (
    user_id   uuid        NOT NULL,
    app       text        NOT NULL,
    badge     text        NOT NULL,
    subject   text        NOT NULL,
    earned_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, app, badge, subject)
);

-- Rewards unlocked: once per user, app and reward; a reward stays.
CREATE TABLE {{schema}}.rewards (
    user_id     uuid        NOT NULL,
    app         text        NOT NULL,
    reward      text        NOT NULL,
    unlocked_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, app, reward)
);

-- Users erased, by a SHA-256 of their id (not the id): an activity event of theirs still on its way when the
-- account went is ignored instead of bringing counters back. Kept 30 days (longer than any stream keeps events).
CREATE TABLE {{schema}}.erased_users (
    user_hash bytea       PRIMARY KEY,
    erased_at timestamptz NOT NULL
);
