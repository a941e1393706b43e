-- RoastMeLater's collections (REQ-COL): each a definition operators edit at run time (names, scenarios, schedule:
-- see RoastCollection), versioned, and the audit trail of every change. Seeded from Catalogue/collections.json.

CREATE TABLE {{schema}}.roast_collections (
    -- A slug: meeting-madness, tet, …
    id          text PRIMARY KEY,
    -- RoastCollection as JSON (the app's fields in English and Vietnamese, the prompts, the schedule).
    definition  jsonb NOT NULL,
    retired     boolean NOT NULL DEFAULT false,
    -- 1 when created, one more per change; an operator's edit may name the version it was made on (If-Match).
    version     integer NOT NULL,
    updated_at  timestamptz NOT NULL,
    -- The operator's name (from ROASTMELATER_OPERATOR_KEYS), or `catalogue` for a seed.
    updated_by  text NOT NULL
);

-- Who changed which collection, when, and what: each top-level field that changed, before and after.
CREATE TABLE {{schema}}.roast_collection_changes (
    id            bigserial PRIMARY KEY,
    collection_id text NOT NULL,
    version       integer NOT NULL,
    -- created, edited, retired, restored
    action        text NOT NULL,
    operator      text NOT NULL,
    at            timestamptz NOT NULL,
    fields        jsonb NOT NULL
);
CREATE INDEX roast_collection_changes_by_collection ON {{schema}}.roast_collection_changes (collection_id, id DESC);

-- A roast asked in a collection: which one and which scenario (a user completes a collection by roasting each).
ALTER TABLE {{schema}}.roasts ADD COLUMN collection text, ADD COLUMN scenario text;
CREATE INDEX roasts_by_collection ON {{schema}}.roasts (user_id, collection) WHERE collection IS NOT NULL;
