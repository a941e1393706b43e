-- The newest check-in by its time, read with every check-in: the zone of "now" is that of the latest check-in by
-- time, counted or not (a late one from elsewhere, sent after, does not move it).
CREATE INDEX check_ins_by_time ON {{schema}}.check_ins (user_id, app, occurred_at DESC);
