-- Waymark core schema, part 4: raw sightings (optional; the aggregator writes them only when
-- `raw_sightings.enabled` is on). Partitioned by day of first_at so that retention drops whole
-- partitions instead of deleting rows. Written with COPY in the same transaction as the gateway
-- high-water mark, so a batch is stored at most once.

CREATE TABLE sightings (
    site_id     text NOT NULL,
    gateway_id  text NOT NULL,
    boot        text NOT NULL,
    seq         bigint NOT NULL,
    device_id   text NOT NULL,
    first_at    timestamptz NOT NULL,
    last_at     timestamptz NOT NULL,
    count       integer NOT NULL,
    rssi_max    real NOT NULL,
    rssi_mean   real NOT NULL,
    rssi_last   real NOT NULL,
    tx          real
) PARTITION BY RANGE (first_at);
CREATE TABLE sightings_default PARTITION OF sightings DEFAULT;
CREATE INDEX sightings_device ON sightings (site_id, device_id, first_at);
COMMENT ON TABLE sightings IS 'Raw per-window sighting aggregates as sent by the gateways, one partition per UTC day (sightings_YYYYMMDD); sightings_default catches times outside the prepared days.';
COMMENT ON COLUMN sightings.boot IS 'Batch identity (gateway, boot, seq) the row came from.';
COMMENT ON COLUMN sightings.seq IS 'Batch sequence number within the boot.';
COMMENT ON COLUMN sightings.device_id IS 'Typed device id (personal data).';
COMMENT ON COLUMN sightings.first_at IS 'First advert of the device in the window (corrected gateway clock).';
COMMENT ON COLUMN sightings.last_at IS 'Last advert of the device in the window.';
COMMENT ON COLUMN sightings.count IS 'Adverts received in the window.';
COMMENT ON COLUMN sightings.rssi_max IS 'Strongest RSSI in the window, dBm (before the gateway offset).';
COMMENT ON COLUMN sightings.rssi_mean IS 'Mean RSSI in the window, dBm.';
COMMENT ON COLUMN sightings.rssi_last IS 'Last RSSI in the window, dBm.';
COMMENT ON COLUMN sightings.tx IS 'Advertised measured power at 1 m, dBm, when the advert carried it.';

-- Creates the daily partitions for [from_day, to_day] that do not exist yet; returns how many.
CREATE FUNCTION waymark_prepare_sighting_partitions(from_day date, to_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    d date := from_day;
    made integer := 0;
    name text;
BEGIN
    WHILE d <= to_day LOOP
        name := 'sightings_' || to_char(d, 'YYYYMMDD');
        IF to_regclass(name) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF sightings FOR VALUES FROM (%L) TO (%L)',
                           name, d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
            made := made + 1;
        END IF;
        d := d + 1;
    END LOOP;
    RETURN made;
END $$;
COMMENT ON FUNCTION waymark_prepare_sighting_partitions(date, date) IS 'Creates the missing daily partitions sightings_YYYYMMDD for the given days (UTC).';

-- Drops daily partitions whose whole day is before keep_from; returns how many.
CREATE FUNCTION waymark_drop_sighting_partitions(keep_from date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    part record;
    dropped integer := 0;
BEGIN
    FOR part IN
        SELECT c.relname FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'sightings'::regclass AND c.relname ~ '^sightings_[0-9]{8}$'
    LOOP
        IF to_date(substr(part.relname, 11), 'YYYYMMDD') < keep_from THEN
            EXECUTE format('DROP TABLE %I', part.relname);
            dropped := dropped + 1;
        END IF;
    END LOOP;
    RETURN dropped;
END $$;
COMMENT ON FUNCTION waymark_drop_sighting_partitions(date) IS 'Retention: drops the daily sighting partitions of days before keep_from.';
