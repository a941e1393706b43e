-- RoastMeLater: the roasts written for each user (the text is the user's own, shown in their history), their
-- reaction and favourite mark, and the rewards gamification granted that unlock parts of the catalogue.

CREATE TABLE {{schema}}.roasts (
    -- UUID version 7: the history is paged by id, newest first.
    id              uuid PRIMARY KEY,
    user_id         uuid NOT NULL,
    category        text NOT NULL,
    spice           smallint NOT NULL CHECK (spice BETWEEN 1 AND 5),
    mood            text,
    language        text NOT NULL,
    text            text NOT NULL,
    artisanal       boolean NOT NULL,
    -- `gemini:…`, `openai:…` or `local`.
    source          text NOT NULL,
    -- The day in the user's time zone it was written on.
    local_date      date NOT NULL,
    -- hilarious, fire, meh or dislike.
    reaction        text,
    reacted_at      timestamptz,
    favourite       boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL,
    idempotency_key text,
    UNIQUE (user_id, idempotency_key)
);
CREATE INDEX roasts_history ON {{schema}}.roasts (user_id, id DESC);

CREATE TABLE {{schema}}.roast_rewards (
    user_id    uuid NOT NULL,
    reward     text NOT NULL,
    granted_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, reward)
);
