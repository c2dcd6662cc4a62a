-- Waymark core schema, part 5: device checkpoints in a compact binary form.
-- The aggregator rewrites the checkpoint of every device that changed in each transaction;
-- as JSON (0003) that cost more than everything else it stores. From this version on it writes
-- `checkpoint` (bytea, the engine's compact binary encoding) and sets `state` to NULL. Rows still
-- holding JSON `state` from an older aggregator are restored from it and converted by their next
-- write, so no data conversion is needed here and a running site upgrades without a pause.

ALTER TABLE device_state ALTER COLUMN state DROP NOT NULL;
ALTER TABLE device_state ADD COLUMN checkpoint bytea;
ALTER TABLE device_state ADD CONSTRAINT device_state_has_a_checkpoint CHECK (state IS NOT NULL OR checkpoint IS NOT NULL);
-- A checkpoint is a few kB and rewritten every flush: keep it in the row, uncompressed (binary
-- numbers hardly compress), instead of moving it to the TOAST table on every update, and leave
-- room in each page so that the update can stay on it (a HOT update, no new index entry).
ALTER TABLE device_state ALTER COLUMN checkpoint SET STORAGE MAIN;
ALTER TABLE device_state SET (toast_tuple_target = 8160, fillfactor = 50);
-- devices is updated (last_seen) by every write too.
ALTER TABLE devices SET (fillfactor = 80);

COMMENT ON COLUMN device_state.state IS 'Legacy checkpoint as JSON, written by aggregators before schema 0005; NULL once the row holds a binary checkpoint.';
COMMENT ON COLUMN device_state.checkpoint IS 'The engine''s per-device state in its compact binary encoding (CompactBinaryEncoder of DeviceCheckpoint); its format belongs to the engine version that wrote it, and a version whose state has another shape ignores it (that device starts fresh).';
