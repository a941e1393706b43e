-- AstroSvitla: life-area reports bought one by one through the App Store. Charts stay on the device: a report
-- names its chart by astrology's fingerprint (a keyed hash of the birth data), never by the birth data itself, and
-- keeps no positions (the chart picture of a PDF is drawn from the birth data the app sends again).

CREATE TABLE {{schema}}.reports (
    id              uuid PRIMARY KEY,
    user_id         uuid NOT NULL,
    -- The chart's fingerprint.
    chart           text NOT NULL,
    area            text NOT NULL,
    language        text NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
    time_known      boolean NOT NULL,
    -- The rules the chart matched, ranked: [{id, score, point, tightness}] for this area and for any area. All a
    -- retry needs to write the report again, and nothing from which the birth data could be read back.
    rules           jsonb NOT NULL,
    -- {keyInfluences, detailedAnalysis, recommendations} once ready; never changed after.
    sections        jsonb,
    -- 'local' or 'provider:model'.
    source          text,
    -- Generation attempts that failed (the background retries back off by it) and when the next is due.
    failed_attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    leased_until    timestamptz,
    failure         text,
    support_code    text,
    created_at      timestamptz NOT NULL,
    ready_at        timestamptz,
    -- One report per account, chart and area: buying the same area again returns it (product decision).
    UNIQUE (user_id, chart, area)
);
CREATE INDEX reports_due ON {{schema}}.reports (next_attempt_at) WHERE status = 'pending';

CREATE TABLE {{schema}}.report_purchases (
    -- SHA-256 of the App Store's transactionId: unique, so a retried or replayed purchase finds its report.
    transaction_hash bytea PRIMARY KEY,
    user_id          uuid NOT NULL,
    report_id        uuid NOT NULL REFERENCES {{schema}}.reports (id) ON DELETE CASCADE,
    product_id       text NOT NULL,
    environment      text NOT NULL,
    -- The catalogue's USD price when bought.
    price_usd        text NOT NULL,
    purchased_at     timestamptz NOT NULL,
    recorded_at      timestamptz NOT NULL,
    -- A REFUND or REVOKE notification; REFUND_REVERSED clears it.
    revoked_at       timestamptz,
    revocation       text
);
CREATE INDEX report_purchases_report ON {{schema}}.report_purchases (report_id);
CREATE INDEX report_purchases_user ON {{schema}}.report_purchases (user_id);

-- Transactions of deleted accounts: the receipt cannot be redeemed again.
CREATE TABLE {{schema}}.redeemed_transactions (
    transaction_hash bytea PRIMARY KEY,
    erased_at        timestamptz NOT NULL
);

-- App Store Server Notifications V2 already handled (Apple retries with the same notificationUUID).
CREATE TABLE {{schema}}.appstore_notifications (
    notification_uuid text PRIMARY KEY,
    type              text NOT NULL,
    subtype           text,
    received_at       timestamptz NOT NULL
);
