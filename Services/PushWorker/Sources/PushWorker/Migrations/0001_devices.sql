-- The push worker's own copy of push registrations, fed by identity's device.* and user.deleted events (it
-- never reads identity's tables). `registered_at` is the `occurredAt` of the event that wrote the row, so an
-- older event delivered late cannot overwrite or delete a newer registration.
CREATE TABLE {{schema}}.devices (
    user_id uuid NOT NULL,
    device_id text NOT NULL,
    app text NOT NULL,
    platform text NOT NULL CHECK (platform IN ('ios', 'android')),
    push_token text NOT NULL,
    locale text,
    time_zone text,
    registered_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, device_id)
);
CREATE INDEX devices_push_token ON {{schema}}.devices (push_token);

-- Accounts deleted recently: a device.registered of such an account that arrives late (redelivered after the
-- user.deleted) must not bring its push token back. Kept 30 days, far beyond any redelivery.
CREATE TABLE {{schema}}.deleted_users (
    user_id uuid PRIMARY KEY,
    deleted_at timestamptz NOT NULL
);
