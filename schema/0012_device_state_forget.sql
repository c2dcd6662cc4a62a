-- Waymark core schema, part 12: devices the fusion engine forgets (fusion.forget_after_s).
-- An idle device (in no region, journey ended, not heard for forget_after_s) is dropped from the
-- engine, and its checkpoint row is deleted in the write that covers that moment. Its slot in the
-- engine goes to the next new device, lowest free slot first, so `ordinal` is a slot number, not an
-- order of first sighting; rows restored by ordinal still give the engine its devices in the order
-- it held them, with the forgotten devices' slots free (issue 19's restart equivalence).

COMMENT ON TABLE device_state IS 'Checkpoint of the fusion engine''s per-device state (filters, region states, open visit and journey), restored when the aggregator starts; deleted when the engine forgets the device (fusion.forget_after_s).';
COMMENT ON COLUMN device_state.ordinal IS 'The device''s slot in the fusion engine (0, 1, …; a forgotten device''s slot goes to the next new device), for restoring the engine in the same order.';
