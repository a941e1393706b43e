-- RoastMeLater's share cards (REQ-SHR): each PNG drawn once per roast, template, format and drawing version, kept
-- for the next download; and how often each roast was shared.

CREATE TABLE {{schema}}.roast_cards (
    roast_id   uuid NOT NULL,
    template   text NOT NULL,
    -- story (1080×1920) or post (1080×1080)
    format     text NOT NULL,
    -- ShareCard.version: a new drawing makes new cards
    version    integer NOT NULL,
    user_id    uuid NOT NULL,
    png        bytea NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (roast_id, template, format, version)
);
CREATE INDEX roast_cards_by_user ON {{schema}}.roast_cards (user_id);

ALTER TABLE {{schema}}.roasts ADD COLUMN shares integer NOT NULL DEFAULT 0;
