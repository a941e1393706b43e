-- A break is decided on one read and written in one statement guarded on the profile row: the row names the user's
-- latest fortune, so a parallel break, an edit or an erasure that committed first makes the guard fail (the break
-- reads and decides again) instead of a lock being held while the break decides.
ALTER TABLE {{schema}}.luckyday_profiles ADD COLUMN latest_fortune_id uuid;
UPDATE {{schema}}.luckyday_profiles p SET latest_fortune_id = (
    SELECT f.id FROM {{schema}}.fortunes f WHERE f.user_id = p.user_id ORDER BY f.revealed_at DESC LIMIT 1);

-- The rules a reveal may break, by the names the store tells apart (the same words twice; a key of an earlier cookie).
ALTER TABLE {{schema}}.fortunes RENAME CONSTRAINT fortunes_user_id_text_hash_key TO fortunes_text_once;
ALTER INDEX {{schema}}.fortunes_idempotency RENAME TO fortunes_key_once;
