-- Waymark core schema, part 13: several aggregators on shards of one site (docs/scaling.md §1).
-- A sharded gateway publishes one batch per shard and window, each shard numbering its own
-- batches, so a high-water mark belongs to (gateway, boot, shard). Each aggregator keeps its
-- engine checkpoint in its own aggregator_state row, keyed by the shards it owns; an aggregator
-- that owns the whole site (every aggregator before shards) uses the key ''.

ALTER TABLE gateway_progress ADD COLUMN shard integer NOT NULL DEFAULT 0 CHECK (shard >= 0);
ALTER TABLE gateway_progress DROP CONSTRAINT gateway_progress_pkey;
ALTER TABLE gateway_progress ADD PRIMARY KEY (site_id, gateway_id, boot, shard);
COMMENT ON TABLE gateway_progress IS 'Acked high-water marks: every batch of (gateway, boot, shard) with a sequence number up to seq is stored. Published on …/gateways/<gw>/ack (…/ack/<shard> when sharded) only after this row commits.';
COMMENT ON COLUMN gateway_progress.shard IS 'The shard of a sharded gateway''s batches (each shard numbers its own); 0 unsharded.';

ALTER TABLE aggregator_state ADD COLUMN shards text NOT NULL DEFAULT '';
ALTER TABLE aggregator_state DROP CONSTRAINT aggregator_state_pkey;
ALTER TABLE aggregator_state ADD PRIMARY KEY (site_id, shards);
COMMENT ON TABLE aggregator_state IS 'Checkpoint of each aggregator beside device_state: engine clock, calibration, gateway health and clock offsets. One row per aggregator of a sharded site.';
COMMENT ON COLUMN aggregator_state.shards IS 'The shards the aggregator owns, as owned/count (''0,3/4''); '''' for an aggregator that owns the whole site.';
