-- When the day's brain was last claimed: the next run is at least 24 hours later whatever the pet's zone does (a
-- move east would otherwise put "today's" slot a few hours after yesterday's run).
ALTER TABLE {{schema}}.pets ADD COLUMN brain_ran_at timestamptz;
