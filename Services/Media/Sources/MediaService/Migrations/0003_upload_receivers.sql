-- The receiver of each kept upload receipt, so deleting an account also forgets the receipts that name it (they
-- belong to the partner who sent the photo).
ALTER TABLE {{schema}}.upload_keys ADD COLUMN receiver_id uuid;
UPDATE {{schema}}.upload_keys SET receiver_id = (receipt::jsonb ->> 'receiverId')::uuid WHERE receipt <> '{}';
CREATE INDEX upload_keys_receiver ON {{schema}}.upload_keys (receiver_id);
