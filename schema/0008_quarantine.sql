-- Waymark core schema, part 8: messages PostgreSQL refused for their data.
-- The aggregator validates every field at ingest (docs/aggregator.md, "Rejections"), so nothing
-- should land here. Should PostgreSQL still refuse a write for its data (SQLSTATE class 22 data
-- exception, 23 integrity constraint violation, or 54000 program limit exceeded), the aggregator
-- writes the group again with one savepoint per message, puts the refused message here with its
-- raw payload and the error, commits the rest and acks the batch, so that one bad message can
-- neither stop the aggregator nor hold back the gateway's spool. Nothing reads this table
-- automatically: it is for the operator (and the edge developer) to look at and delete.

CREATE TABLE quarantine (
    quarantine_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id         text NOT NULL REFERENCES sites ON DELETE CASCADE,
    received_at     timestamptz NOT NULL,
    gateway_id      text,
    kind            text NOT NULL,
    payload         bytea,
    sqlstate        text NOT NULL,
    error           text NOT NULL,
    quarantined_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quarantine_received ON quarantine (site_id, received_at);
COMMENT ON TABLE quarantine IS 'Messages (or derived rows) that passed the aggregator''s checks but that PostgreSQL refused for their data; set aside so the rest of the write commits. See docs/aggregator.md, "Quarantine".';
COMMENT ON COLUMN quarantine.quarantine_id IS 'Row id (insertion order).';
COMMENT ON COLUMN quarantine.received_at IS 'When the aggregator received the message (for derived rows: when they were set aside).';
COMMENT ON COLUMN quarantine.gateway_id IS 'The gateway of the topic the message arrived on; NULL for derived rows.';
COMMENT ON COLUMN quarantine.kind IS 'sightings (a batch whose raw sightings were refused), status, or rows:<table> (rows the fusion engine derived, which no single message owns).';
COMMENT ON COLUMN quarantine.payload IS 'The MQTT payload as received, byte for byte (NULL for derived rows). May hold device ids: personal data, delete after inspection.';
COMMENT ON COLUMN quarantine.sqlstate IS 'The SQLSTATE PostgreSQL reported, e.g. 22003 numeric value out of range.';
COMMENT ON COLUMN quarantine.error IS 'PostgreSQL''s error message with its detail.';
COMMENT ON COLUMN quarantine.quarantined_at IS 'Commit time (server clock).';
