-- Waymark core schema, part 14: the shard of a raw sighting's batch (docs/scaling.md §1). With
-- shards each shard of a gateway's boot numbers its own batches, so a batch is identified by
-- (gateway, boot, shard, seq); unsharded batches are shard 0.

ALTER TABLE sightings ADD COLUMN shard integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN sightings.boot IS 'Batch identity (gateway, boot, shard, seq) the row came from.';
COMMENT ON COLUMN sightings.shard IS 'The shard of the batch (each shard of a sharded gateway numbers its own batches); 0 unsharded.';
