-- What a roast's prompt learns from the user's reactions (RoastStore.taste), read before every roast: the latest
-- roasts of one category, and the user's 🔥 roasts newest first, each from an index instead of the whole history.
CREATE INDEX roasts_by_category ON {{schema}}.roasts (user_id, category, id DESC);
CREATE INDEX roasts_loved ON {{schema}}.roasts (user_id, reacted_at DESC) WHERE reaction = 'fire';
