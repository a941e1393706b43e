-- AstroSvitla's App Store transactions (issue #23): a transaction is known by its App Store environment and its
-- id, never by its id alone, and the notifications about it apply in the order Apple signed them.

-- A purchase's key is (transaction_hash, environment). A transactionId of the sandbox (or of a developer's own
-- StoreKit signing, Xcode or LocalTesting) never meets the same id of production: each is its own purchase.
-- The hash stays the SHA-256 of the transactionId alone, so the rows already here keep working as they are: every
-- purchase has recorded the verified transaction's environment since 0002 (the column existed, only the key
-- ignored it), and a hash cannot be recomputed with the environment in it anyway.
ALTER TABLE {{schema}}.report_purchases DROP CONSTRAINT report_purchases_pkey;
ALTER TABLE {{schema}}.report_purchases ADD PRIMARY KEY (transaction_hash, environment);

-- The signedDate of the last App Store notification applied to the purchase (REFUND, REVOKE, REFUND_REVERSED).
-- Apple retries a notification for days, so they arrive out of order: one signed before the one applied is
-- acknowledged and changes nothing (ReportStore.apply, a condition of its UPDATE). NULL, as every purchase made
-- so far has: the next notification applies, as it did before.
ALTER TABLE {{schema}}.report_purchases ADD COLUMN notification_signed_at timestamptz;

-- Tombstones keep the environment too. The ones already here were written without it, and it cannot be read back
-- from a hash: they keep NULL, which ReportStore.record reads as any environment, so an old tombstone goes on
-- refusing its transactionId everywhere, as it did (the safe side: a deleted account's receipt is never redeemed
-- again). New ones name the environment of the erased purchase.
ALTER TABLE {{schema}}.redeemed_transactions ADD COLUMN environment text;
ALTER TABLE {{schema}}.redeemed_transactions DROP CONSTRAINT redeemed_transactions_pkey;
CREATE UNIQUE INDEX redeemed_transactions_key ON {{schema}}.redeemed_transactions (transaction_hash, environment);
