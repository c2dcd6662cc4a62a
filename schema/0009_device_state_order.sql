-- Waymark core schema, part 9: the order in which the fusion engine holds its devices.
-- The engine visits its devices in a fixed order every second (timers, smoothing) and learns the
-- venue's radio from them in that order; floating-point sums depend on it. Restoring the devices
-- in the order the engine held them makes a restarted aggregator compute exactly what an
-- uninterrupted one does (issue 19). Rows written before this version have no ordinal and are
-- restored after the others, by device id.

ALTER TABLE device_state ADD COLUMN ordinal bigint;

COMMENT ON COLUMN device_state.ordinal IS 'The device''s position in the fusion engine (0, 1, …: order of first sighting), for restoring the engine in the same order.';
