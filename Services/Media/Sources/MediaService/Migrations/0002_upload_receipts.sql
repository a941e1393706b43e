-- A replayed upload answers with the receipt it got the first time, even after that photo was replaced.
ALTER TABLE {{schema}}.upload_keys ADD COLUMN receipt text NOT NULL DEFAULT '{}';
