-- The streak's state as columns instead of one JSON value. Every check-in reads it and most write it; decoding and
-- encoding the JSON was a tenth of the service's CPU per check-in (docs/benchmarks.md). The names are
-- StreakState's fields.
ALTER TABLE {{schema}}.streaks
    ADD COLUMN current         integer     NOT NULL DEFAULT 0,
    ADD COLUMN longest         integer     NOT NULL DEFAULT 0,
    ADD COLUMN total_days      integer     NOT NULL DEFAULT 0,
    ADD COLUMN run_start       date,
    ADD COLUMN last_day        date,
    ADD COLUMN last_instant    timestamptz,
    ADD COLUMN last_zone       text,
    ADD COLUMN previous_end    date,
    ADD COLUMN previous_length integer,
    ADD COLUMN freeze_used     boolean     NOT NULL DEFAULT false;

UPDATE {{schema}}.streaks SET
    current         = coalesce((state->>'current')::integer, 0),
    longest         = coalesce((state->>'longest')::integer, 0),
    total_days      = coalesce((state->>'totalDays')::integer, 0),
    run_start       = (state->>'runStart')::date,
    last_day        = (state->>'lastDay')::date,
    last_instant    = (state->>'lastInstant')::timestamptz,
    last_zone       = state->>'lastZone',
    previous_end    = (state->>'previousEnd')::date,
    previous_length = (state->>'previousLength')::integer,
    freeze_used     = coalesce((state->>'freezeUsed')::boolean, false);

ALTER TABLE {{schema}}.streaks DROP COLUMN state;
