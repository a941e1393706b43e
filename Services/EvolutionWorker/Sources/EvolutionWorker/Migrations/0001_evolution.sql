-- evolution-worker's schema: one row per evolution image job (`evolution.requested` from health-brain), which is the
-- queue of its attempts too. A job is drawn at most once: a redelivered request finds its row; the image's key is
-- the evolution's id, so a retried attempt overwrites its own object and nothing else.

CREATE TABLE {{schema}}.jobs (
    evolution_id        uuid        PRIMARY KEY,
    user_id             uuid        NOT NULL,
    stage               integer     NOT NULL,
    state               text        NOT NULL,
    previous_image_key  text,
    seed                text        NOT NULL,
    -- pending (waiting for `due_at`), done (the image is stored and symbi.evolved sent) or dead (dead-lettered
    -- after EVOLUTION_MAX_ATTEMPTS; a replay of the dead letter makes it pending again).
    status              text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dead')),
    attempts            integer     NOT NULL DEFAULT 0,
    due_at              timestamptz NOT NULL,
    -- The original request as it came (the dead letter carries it, so an operator can replay it).
    request             text        NOT NULL,
    last_error          text,
    image_key           text,
    generator           text,
    requested_at        timestamptz NOT NULL,
    finished_at         timestamptz
);
-- Claiming: the due pending jobs, oldest first.
CREATE INDEX jobs_due ON {{schema}}.jobs (due_at) WHERE status = 'pending';
CREATE INDEX jobs_user ON {{schema}}.jobs (user_id);

-- Users erased by `user.deleted` (LanternDatabase's ErasedUsers): a request of theirs still on its way, or a drawing
-- that raced the deletion, stores nothing. Kept 30 days.
CREATE TABLE {{schema}}.erased_users (
    user_hash bytea       PRIMARY KEY,
    erased_at timestamptz NOT NULL
);
