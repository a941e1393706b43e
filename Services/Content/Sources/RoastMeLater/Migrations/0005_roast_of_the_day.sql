-- RoastMeLater's widget (REQ-WDG): each user's widget settings with the schedule of their next roast of the day
-- (made ahead by the periodic work `roastmelater_roast_of_the_day`), the roasts of the day, and content's copy of
-- gamification's streaks (the large widget shows it without calling gamification).

CREATE TABLE {{schema}}.roast_widgets (
    user_id      uuid PRIMARY KEY,
    -- Category ids of the catalogue the day's roast is drawn from (REQ-WDG-007).
    categories   text[] NOT NULL,
    -- The day's roast is at most this spicy (REQ-WDG-008).
    max_spice    smallint NOT NULL CHECK (max_spice BETWEEN 1 AND 5),
    language     text NOT NULL,
    -- The device's IANA time zone: where a day begins.
    time_zone    text NOT NULL,
    updated_at   timestamptz NOT NULL,
    -- The local day whose roast is made next, when (ahead of that day's midnight), and the lease of the worker
    -- making it (replicas share the rows with FOR UPDATE SKIP LOCKED).
    next_day     date NOT NULL,
    due_at       timestamptz NOT NULL,
    leased_until timestamptz,
    -- The last local day the widget was read: a widget unread for 14 days gets no new roasts (no model calls for
    -- someone who left) until it is read again.
    last_viewed_day date NOT NULL
);
CREATE INDEX roast_widgets_due ON {{schema}}.roast_widgets (due_at);

CREATE TABLE {{schema}}.roasts_of_the_day (
    user_id    uuid NOT NULL,
    local_date date NOT NULL,
    id         uuid NOT NULL,
    category   text NOT NULL,
    spice      smallint NOT NULL,
    language   text NOT NULL,
    text       text NOT NULL,
    artisanal  boolean NOT NULL,
    source     text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, local_date)
);

CREATE TABLE {{schema}}.roast_streaks (
    user_id         uuid PRIMARY KEY,
    current         integer NOT NULL,
    longest         integer NOT NULL,
    last_active_day date,
    -- gamification's `updatedAt`: the copy keeps the latest.
    updated_at      timestamptz NOT NULL
);
