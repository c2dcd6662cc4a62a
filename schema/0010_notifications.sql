-- Waymark core schema, part 10: notifications (hello / goodbye rules, docs/notifications.md).
-- The aggregator evaluates the site file's `notifications:` rules over the fusion engine's
-- recorded location changes. Each notification is inserted in the same transaction as the rows
-- and gateway high-water marks of the batches that caused it, together with the notifier's
-- per-device state (cool-downs, dwell timers): after a crash the aggregator resumes from exactly
-- that state, and the gateways resend the rest, so nothing is sent twice or lost. The
-- notification id is derived from (site, rule, kind, device, evidence time), so the same evidence
-- always gives the same id and the insert is idempotent on it. This table is also the outbox of
-- the deliveries: MQTT publication and webhook status are recorded on each row after the fact,
-- and what is not yet delivered is delivered again at the next start.

CREATE TABLE notifications (
    site_id                 text NOT NULL REFERENCES sites ON DELETE CASCADE,
    notification_id         uuid NOT NULL,
    rule_id                 text NOT NULL,
    kind                    text NOT NULL CHECK (kind IN ('enter', 'exit', 'dwell', 'return')),
    device_id               text NOT NULL,
    region_id               text NOT NULL,
    at                      timestamptz NOT NULL,
    message                 text NOT NULL,
    payload                 json NOT NULL,
    webhook_status          text CHECK (webhook_status IN ('pending', 'delivered', 'failed', 'dropped', 'cancelled')),
    webhook_attempts        integer NOT NULL DEFAULT 0,
    webhook_delivered_at    timestamptz,
    mqtt_published_at       timestamptz,
    created_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, notification_id)
);
CREATE INDEX notifications_at ON notifications (site_id, at);
CREATE INDEX notifications_rule_at ON notifications (site_id, rule_id, at);
-- What the next start must deliver again (small: normally empty or a few rows).
CREATE INDEX notifications_undelivered ON notifications (site_id, at)
    WHERE mqtt_published_at IS NULL OR webhook_status = 'pending';

COMMENT ON TABLE notifications IS 'Notifications sent by the site file''s rules (enter, exit, dwell, return), one row each, written exactly once in the transaction of the batches that caused them; also the delivery outbox (MQTT and webhook status). See docs/notifications.md.';
COMMENT ON COLUMN notifications.notification_id IS 'Deterministic id (UUID version 8 from SHA-256 of site, rule, kind, device and evidence time in ms): the same in waymark replay, after restarts, on MQTT and in the webhook''s X-Waymark-Id header; receivers de-duplicate on it.';
COMMENT ON COLUMN notifications.rule_id IS 'The rule''s id in the site file (notifications[].id).';
COMMENT ON COLUMN notifications.kind IS 'enter, exit, dwell or return: the rule''s `when`.';
COMMENT ON COLUMN notifications.at IS 'Time of the evidence: the entry, the exit (for a goodbye sent after absence_s, still the exit), or the moment the dwell was reached.';
COMMENT ON COLUMN notifications.message IS 'The rule''s message with its placeholders filled in.';
COMMENT ON COLUMN notifications.payload IS 'The JSON document published on MQTT and POSTed to the webhook, byte for byte as sent.';
COMMENT ON COLUMN notifications.webhook_status IS 'NULL: the rule has no webhook. pending: not yet acknowledged with 2xx (retried with backoff, again after a restart); delivered; failed: refused with a 4xx other than 408/429, or still failing after webhooks.give_up_after_s; dropped: pushed out of a full delivery queue (webhooks.queue_size); cancelled: the rule or its webhook was removed from the site file.';
COMMENT ON COLUMN notifications.webhook_attempts IS 'HTTP attempts made so far (each one is in webhook_attempts).';
COMMENT ON COLUMN notifications.webhook_delivered_at IS 'When the receiver answered 2xx.';
COMMENT ON COLUMN notifications.mqtt_published_at IS 'When the broker acknowledged (PUBACK) both MQTT messages; NULL: to publish again at the next start.';
COMMENT ON COLUMN notifications.created_at IS 'Commit time (server clock).';

CREATE TABLE webhook_attempts (
    attempt_id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id                 text NOT NULL,
    notification_id         uuid NOT NULL,
    attempt                 integer NOT NULL,
    started_at              timestamptz NOT NULL,
    duration_ms             double precision NOT NULL,
    http_status             integer,
    outcome                 text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed')),
    error                   text,
    FOREIGN KEY (site_id, notification_id) REFERENCES notifications ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_notification ON webhook_attempts (site_id, notification_id);
COMMENT ON TABLE webhook_attempts IS 'Every HTTP POST of a notification to its rule''s webhook, with its outcome (docs/notifications.md, "Webhooks").';
COMMENT ON COLUMN webhook_attempts.attempt_id IS 'Row id (insertion order).';
COMMENT ON COLUMN webhook_attempts.notification_id IS 'The notification (notifications.notification_id) that was POSTed.';
COMMENT ON COLUMN webhook_attempts.attempt IS '1 for the first POST of the notification, 2 for the first retry, …';
COMMENT ON COLUMN webhook_attempts.started_at IS 'When the request was sent (aggregator clock).';
COMMENT ON COLUMN webhook_attempts.duration_ms IS 'Until the response or the error.';
COMMENT ON COLUMN webhook_attempts.http_status IS 'The response status; NULL when there was none (connection refused, timeout, TLS error).';
COMMENT ON COLUMN webhook_attempts.outcome IS 'delivered (2xx), retry (will be tried again after a backoff), failed (given up).';
COMMENT ON COLUMN webhook_attempts.error IS 'What went wrong: the connection error, or the status with the start of the response body.';

CREATE TABLE notification_state (
    site_id                 text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id               text NOT NULL,
    state                   jsonb NOT NULL,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, device_id)
);
COMMENT ON TABLE notification_state IS 'The notification rules'' checkpoint per device (the notifier''s part of the device checkpoint): per rule whether the device is in the rule''s regions, since when, its last notification (cool-down) and any pending dwell or goodbye. Written in the same transaction as device_state.';
COMMENT ON COLUMN notification_state.state IS '{"rules": {"<rule id>": {"inside", "region", "confidence", "entered_at", "left_at", "last_sent_at", "due"}}} with times in Unix seconds.';
COMMENT ON COLUMN notification_state.updated_at IS 'Commit time of the last change.';
