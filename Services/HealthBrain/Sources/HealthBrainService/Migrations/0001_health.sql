-- health-brain's schema: Symbi's pets. Raw health values live only in `metrics`, at most 24 hours after they were
-- processed (Req 11.3); what stays is derived: each day's descriptors and state (30 days, Req 14.3), the pet's
-- counters and one moving average of HRV. Every table is per user; deleting a user deletes their rows in each.

-- One row per user: settings, the current state, the evolution counters and the brain's plan.
CREATE TABLE {{schema}}.pets (
    user_id            uuid             PRIMARY KEY,
    mode               text             NOT NULL DEFAULT 'synced',
    zone               text             NOT NULL DEFAULT 'UTC',
    sad_to_resting     integer          NOT NULL DEFAULT 2000,
    resting_to_active  integer          NOT NULL DEFAULT 8000,
    steps_goal         integer          NOT NULL DEFAULT 8000,
    sleep_goal_hours   double precision NOT NULL DEFAULT 8,
    state              text             NOT NULL DEFAULT 'resting',
    state_source       text             NOT NULL DEFAULT 'default',
    -- The local day the state is about.
    state_day          date,
    state_since        timestamptz      NOT NULL,
    version            integer          NOT NULL DEFAULT 1,
    active_days        integer          NOT NULL DEFAULT 0,
    stage              integer          NOT NULL DEFAULT 0,
    -- The current form: the latest evolution whose image is ready.
    form               uuid,
    mindful_minutes    integer          NOT NULL DEFAULT 0,
    hrv_average        double precision,
    hrv_days           integer          NOT NULL DEFAULT 0,
    -- When the day's brain runs next, and the last local day it was claimed for (at most one model call a day).
    brain_due_at       timestamptz,
    brain_day          date,
    created_at         timestamptz      NOT NULL,
    updated_at         timestamptz      NOT NULL
);
CREATE INDEX pets_brain_due_at ON {{schema}}.pets (brain_due_at) WHERE brain_due_at IS NOT NULL;

-- Raw values, one row per user, local day and source (the latest reading wins); purged 24 hours after processing.
CREATE TABLE {{schema}}.metrics (
    user_id          uuid             NOT NULL,
    local_date       date             NOT NULL,
    source           text             NOT NULL,
    recorded_at      timestamptz      NOT NULL,
    steps            integer,
    sleep_hours      double precision,
    hrv_ms           double precision,
    steps_goal       integer,
    sleep_goal_hours double precision,
    processed_at     timestamptz      NOT NULL,
    PRIMARY KEY (user_id, local_date, source)
);
CREATE INDEX metrics_processed_at ON {{schema}}.metrics (processed_at);

-- What is kept of a day: its descriptors (words, never numbers), the state from steps and the day's state.
CREATE TABLE {{schema}}.days (
    user_id        uuid        NOT NULL,
    local_date     date        NOT NULL,
    steps          text        NOT NULL,
    sleep          text        NOT NULL,
    hrv            text        NOT NULL,
    rule_state     text,
    state          text        NOT NULL,
    source         text        NOT NULL,
    active_counted boolean     NOT NULL DEFAULT false,
    hrv_folded     boolean     NOT NULL DEFAULT false,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (user_id, local_date)
);
CREATE INDEX days_local_date ON {{schema}}.days (local_date);

-- Calm sessions by Idempotency-Key (Req 7): the mindful minutes recorded.
CREATE TABLE {{schema}}.sessions (
    user_id         uuid        NOT NULL,
    idempotency_key text        NOT NULL,
    minutes         integer     NOT NULL,
    completed_at    timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (user_id, idempotency_key)
);
CREATE INDEX sessions_created_at ON {{schema}}.sessions (created_at);

-- Evolutions (Req 8): triggered at every 30 lively days, drawn by evolution-worker; the gallery in stage order.
CREATE TABLE {{schema}}.evolutions (
    evolution_id uuid        PRIMARY KEY,
    user_id      uuid        NOT NULL,
    stage        integer     NOT NULL,
    active_days  integer     NOT NULL,
    state        text        NOT NULL,
    triggered_at timestamptz NOT NULL,
    image_key    text,
    content_type text,
    width        integer,
    height       integer,
    generator    text,
    evolved_at   timestamptz,
    UNIQUE (user_id, stage)
);
