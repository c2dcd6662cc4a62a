-- Waymark reports, part 2: what the entrance capture report needs beyond visits.
--
-- Passers-by are devices an entrance gateway hears that never go inside. Visits only record
-- devices that were inside a region, and raw sightings are optional, so the aggregator records
-- "heard at an entrance" here: one row per device, entrance region and UTC hour in which any of the
-- region's gateways heard the device (inside the region's radius or not). Proposed contract for
-- the aggregator: after fusing a batch, upsert
--     INSERT INTO entrance_heard (site_id, region_id, device_id, hour, first_heard_at, last_heard_at)
--     VALUES (...) ON CONFLICT (site_id, region_id, device_id, hour) DO UPDATE
--       SET first_heard_at = least(entrance_heard.first_heard_at, excluded.first_heard_at),
--           last_heard_at = greatest(entrance_heard.last_heard_at, excluded.last_heard_at);
-- in the same transaction as the visits. Until it does, the capture report has no rows.

CREATE TABLE entrance_heard (
    site_id         text NOT NULL,
    region_id       text NOT NULL,
    device_id       text NOT NULL,
    hour            timestamptz NOT NULL,
    first_heard_at  timestamptz NOT NULL,
    last_heard_at   timestamptz NOT NULL,
    PRIMARY KEY (site_id, region_id, device_id, hour)
);
CREATE INDEX entrance_heard_hour ON entrance_heard (site_id, hour);
COMMENT ON TABLE entrance_heard IS 'Devices heard by the gateways of an entrance region (regions.is_entrance), one row per device, region and UTC hour; the capture report compares them with visits to count passers-by. Personal data: same access as devices.';
COMMENT ON COLUMN entrance_heard.hour IS 'Start of the UTC hour of the sightings.';
COMMENT ON COLUMN entrance_heard.first_heard_at IS 'First sighting of the device at the region''s gateways in the hour.';
COMMENT ON COLUMN entrance_heard.last_heard_at IS 'Last sighting in the hour.';

CREATE TABLE report_capture_rollup (
    site_id       text NOT NULL,
    period        text NOT NULL CHECK (period IN ('hour', 'day', 'week')),
    period_start  timestamptz NOT NULL,
    region_id     text NOT NULL,
    heard         bigint NOT NULL,
    visitors      bigint NOT NULL,
    PRIMARY KEY (site_id, period, period_start, region_id)
);
COMMENT ON TABLE report_capture_rollup IS 'Per entrance region and period: heard = distinct devices heard at the entrance in the period; visitors = those of them with a visit (any region) entering in the same period. Passers-by = heard - visitors.';

CREATE FUNCTION report_mark_entrance_heard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT DISTINCT c.site_id, c.hour FROM changed_rows c
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE TRIGGER report_entrance_heard_insert AFTER INSERT ON entrance_heard
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_entrance_heard();
CREATE TRIGGER report_entrance_heard_update AFTER UPDATE ON entrance_heard
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_entrance_heard();
CREATE TRIGGER report_entrance_heard_delete AFTER DELETE ON entrance_heard
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_entrance_heard();
