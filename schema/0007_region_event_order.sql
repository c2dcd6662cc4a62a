-- Region events in the order the aggregator recorded them.
--
-- A current-region change is dated by its evidence (when the new region's lead began), so two
-- changes of one device can carry the same time: ordering by `at` alone leaves such a pair in
-- any order. `seq` follows the order in which the engine produced the events (each write inserts
-- them in that order), so `ORDER BY device_id, at, seq` replays a device's history exactly.

ALTER TABLE region_events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;

COMMENT ON COLUMN region_events.seq IS 'Recording order: increases with every event the aggregator writes, in the order the fusion engine produced them. Breaks ties between events of one device with the same time: ORDER BY device_id, at, seq.';
