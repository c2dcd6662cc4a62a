-- Waymark core schema, part 3: ingest bookkeeping of the aggregator.
-- gateway_progress and device_state are written in the same transaction as the rows of
-- 0002_paths.sql, so after a crash the aggregator resumes from a consistent point: the restored
-- device state covers exactly the batches at or below each gateway's high-water mark, and the
-- gateways resend everything above it (they keep unacked batches in their spool).

CREATE TABLE gateway_progress (
    site_id       text NOT NULL REFERENCES sites ON DELETE CASCADE,
    gateway_id    text NOT NULL,
    boot          text NOT NULL,
    seq           bigint NOT NULL CHECK (seq >= 0),
    first_seen    timestamptz NOT NULL DEFAULT now(),
    committed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, gateway_id, boot)
);
CREATE INDEX gateway_progress_committed ON gateway_progress (site_id, gateway_id, committed_at);
COMMENT ON TABLE gateway_progress IS 'Acked high-water marks: every batch of (gateway, boot) with a sequence number up to seq is stored. Published on …/gateways/<gw>/ack only after this row commits.';
COMMENT ON COLUMN gateway_progress.boot IS 'Random id the edge agent picks at each start; seq restarts with each boot.';
COMMENT ON COLUMN gateway_progress.seq IS 'Highest committed batch sequence number of this boot.';
COMMENT ON COLUMN gateway_progress.first_seen IS 'When the first batch of this boot was committed.';
COMMENT ON COLUMN gateway_progress.committed_at IS 'When seq last advanced (server time).';

CREATE TABLE device_state (
    site_id     text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id   text NOT NULL,
    state       jsonb NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, device_id)
);
COMMENT ON TABLE device_state IS 'Checkpoint of the fusion engine''s per-device state (filters, region states, open visit and journey), restored when the aggregator starts.';
COMMENT ON COLUMN device_state.state IS 'The engine''s Codable per-device state as JSON; its format belongs to the engine version that wrote it.';
COMMENT ON COLUMN device_state.updated_at IS 'Commit time of the last change (server time).';

CREATE TABLE aggregator_state (
    site_id      text PRIMARY KEY REFERENCES sites ON DELETE CASCADE,
    state        jsonb NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE aggregator_state IS 'Site-wide checkpoint of the aggregator beside device_state: engine clock, gateway health and clock offsets.';
COMMENT ON COLUMN aggregator_state.state IS 'JSON written and read by waymark-aggregator.';
COMMENT ON COLUMN aggregator_state.updated_at IS 'Commit time of the checkpoint (server time).';

CREATE TABLE gateway_status (
    site_id        text NOT NULL REFERENCES sites ON DELETE CASCADE,
    gateway_id     text NOT NULL,
    received_at    timestamptz NOT NULL,
    state          text NOT NULL CHECK (state IN ('online', 'offline')),
    boot           text,
    version        text,
    spool_depth    integer,
    spool_dropped  bigint,
    scan           text,
    reported_at    timestamptz
);
CREATE UNIQUE INDEX gateway_status_key ON gateway_status (site_id, gateway_id, received_at, state);
CREATE INDEX gateway_status_received ON gateway_status (site_id, received_at);
COMMENT ON TABLE gateway_status IS 'History of the retained …/gateways/<gw>/status messages (gateway health report: online time, spool depth, drops).';
COMMENT ON COLUMN gateway_status.received_at IS 'When the aggregator received the status (its clock).';
COMMENT ON COLUMN gateway_status.state IS 'online, or offline (also the broker''s last will when the gateway vanished).';
COMMENT ON COLUMN gateway_status.boot IS 'The edge agent''s boot id when it reported one.';
COMMENT ON COLUMN gateway_status.version IS 'waymark-edge version.';
COMMENT ON COLUMN gateway_status.spool_depth IS 'Batches waiting in the gateway''s spool for an ack.';
COMMENT ON COLUMN gateway_status.spool_dropped IS 'Batches the gateway dropped because its spool was full (cumulative per boot).';
COMMENT ON COLUMN gateway_status.scan IS 'Scanner state: on, off, error or replay.';
COMMENT ON COLUMN gateway_status.reported_at IS 'The gateway''s own timestamp in the status (its clock; may be wrong).';

CREATE TABLE gateway_ingest_hourly (
    site_id              text NOT NULL REFERENCES sites ON DELETE CASCADE,
    gateway_id           text NOT NULL,
    hour                 timestamptz NOT NULL,
    batches              bigint NOT NULL DEFAULT 0,
    sightings            bigint NOT NULL DEFAULT 0,
    clock_corrected      bigint NOT NULL DEFAULT 0,
    last_batch_at        timestamptz,
    max_clock_offset_s   double precision,
    PRIMARY KEY (site_id, gateway_id, hour)
);
COMMENT ON TABLE gateway_ingest_hourly IS 'Per gateway and hour (of receive time): batches and sightings stored. Incremented in the same transaction as gateway_progress, so exact.';
COMMENT ON COLUMN gateway_ingest_hourly.hour IS 'Start of the hour (receive time, UTC).';
COMMENT ON COLUMN gateway_ingest_hourly.batches IS 'Batches stored.';
COMMENT ON COLUMN gateway_ingest_hourly.sightings IS 'Sighting entries (device aggregates) in those batches.';
COMMENT ON COLUMN gateway_ingest_hourly.clock_corrected IS 'Batches whose times were shifted by the gateway''s estimated clock offset.';
COMMENT ON COLUMN gateway_ingest_hourly.last_batch_at IS 'Receive time of the last stored batch in the hour.';
COMMENT ON COLUMN gateway_ingest_hourly.max_clock_offset_s IS 'Largest absolute clock offset applied in the hour, seconds.';

CREATE TABLE gateway_rejections (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    gateway_id   text NOT NULL,
    hour         timestamptz NOT NULL,
    reason       text NOT NULL,
    count        bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, gateway_id, hour, reason)
);
COMMENT ON TABLE gateway_rejections IS 'Batches the aggregator rejected or dropped, per topic gateway, hour and reason (duplicate, gateway_mismatch, unknown_gateway, malformed, oversize, version, clock_absurd …). Best effort: counted once per processing, so a rejected batch the gateway resends is counted again.';
COMMENT ON COLUMN gateway_rejections.gateway_id IS 'The gateway level of the topic the payload arrived on (not necessarily a known gateway).';
COMMENT ON COLUMN gateway_rejections.hour IS 'Start of the hour of receive time (UTC).';
COMMENT ON COLUMN gateway_rejections.reason IS 'Why the batch was not used.';
COMMENT ON COLUMN gateway_rejections.count IS 'How many batches.';
