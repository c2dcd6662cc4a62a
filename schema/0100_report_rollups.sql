-- Waymark reports, part 1: the rollup tables behind the foot-traffic reports, and the triggers that
-- note which hours changed. The rollups are derived data: waymark_report_refresh() (0101) rebuilds
-- exactly the hours, days and weeks that the triggers marked, so reports over months read a few
-- thousand rollup rows instead of millions of visits. Periods are UTC hours, UTC days and ISO weeks
-- (starting Monday 00:00 UTC). Nothing here is written by the aggregator directly.

CREATE TABLE report_dirty_hours (
    site_id  text NOT NULL,
    hour     timestamptz NOT NULL,
    PRIMARY KEY (site_id, hour)
);
COMMENT ON TABLE report_dirty_hours IS 'Hours (UTC) whose visits, journeys, transitions or entrance sightings changed since the last waymark_report_refresh(); filled by triggers, emptied by the refresh.';

CREATE TABLE report_region_rollup (
    site_id         text NOT NULL,
    period          text NOT NULL CHECK (period IN ('hour', 'day', 'week')),
    period_start    timestamptz NOT NULL,
    region_id       text NOT NULL,
    visits          bigint NOT NULL DEFAULT 0,
    inferred_visits bigint NOT NULL DEFAULT 0,
    devices         bigint NOT NULL DEFAULT 0,
    dwell_visits    bigint NOT NULL DEFAULT 0,
    dwell_total_s   double precision NOT NULL DEFAULT 0,
    dwell_p50_s     double precision,
    dwell_p90_s     double precision,
    dwell_under_5m  bigint NOT NULL DEFAULT 0,
    dwell_5_20m     bigint NOT NULL DEFAULT 0,
    dwell_20_60m    bigint NOT NULL DEFAULT 0,
    dwell_1_6h      bigint NOT NULL DEFAULT 0,
    dwell_6h_plus   bigint NOT NULL DEFAULT 0,
    presence_s      double precision NOT NULL DEFAULT 0,
    peak_devices    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, period, period_start, region_id)
);
COMMENT ON TABLE report_region_rollup IS 'Per region and UTC hour, day or ISO week. Visit and dwell figures count visits that entered in the period; devices is the exact number of distinct devices among them, computed per period (never summed across hours); presence and peak cover every moment of the period.';
COMMENT ON COLUMN report_region_rollup.visits IS 'Visits that entered the region in the period, inferred ones included.';
COMMENT ON COLUMN report_region_rollup.inferred_visits IS 'Of those, visits on an inferred path (not observed directly).';
COMMENT ON COLUMN report_region_rollup.devices IS 'Distinct devices with a visit entering in the period (exact for this period).';
COMMENT ON COLUMN report_region_rollup.dwell_visits IS 'Observed (not inferred) visits entering in the period: the population of the dwell figures.';
COMMENT ON COLUMN report_region_rollup.dwell_total_s IS 'Sum of their dwell times, seconds.';
COMMENT ON COLUMN report_region_rollup.dwell_p50_s IS 'Median dwell, seconds (percentile_cont 0.5: linear interpolation); NULL without observed visits.';
COMMENT ON COLUMN report_region_rollup.dwell_p90_s IS '90th percentile dwell, seconds (percentile_cont 0.9).';
COMMENT ON COLUMN report_region_rollup.dwell_under_5m IS 'Observed visits with dwell < 5 min.';
COMMENT ON COLUMN report_region_rollup.dwell_5_20m IS 'Observed visits with 5 min <= dwell < 20 min.';
COMMENT ON COLUMN report_region_rollup.dwell_20_60m IS 'Observed visits with 20 min <= dwell < 60 min.';
COMMENT ON COLUMN report_region_rollup.dwell_1_6h IS 'Observed visits with 1 h <= dwell < 6 h.';
COMMENT ON COLUMN report_region_rollup.dwell_6h_plus IS 'Observed visits with dwell >= 6 h.';
COMMENT ON COLUMN report_region_rollup.presence_s IS 'Device-seconds present in the region during the period (a device is present from entered_at inclusive to exited_at exclusive); divided by the period length it is the average number of devices present.';
COMMENT ON COLUMN report_region_rollup.peak_devices IS 'Largest number of devices present at the same moment during the period.';

CREATE TABLE report_site_rollup (
    site_id       text NOT NULL,
    period        text NOT NULL CHECK (period IN ('hour', 'day', 'week')),
    period_start  timestamptz NOT NULL,
    visits        bigint NOT NULL DEFAULT 0,
    devices       bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, period, period_start)
);
COMMENT ON TABLE report_site_rollup IS 'Per site and UTC hour, day or ISO week: visits entering in the period and the exact number of distinct devices with such a visit (loyalty report).';

CREATE TABLE report_device_first_visit (
    site_id         text NOT NULL,
    device_id       text NOT NULL,
    first_visit_at  timestamptz NOT NULL,
    PRIMARY KEY (site_id, device_id)
);
CREATE INDEX report_device_first_visit_at ON report_device_first_visit (site_id, first_visit_at);
COMMENT ON TABLE report_device_first_visit IS 'When each device entered its first region at the site: a device is new in the period that holds this time and returning in later periods (loyalty report). Personal data: same access as devices.';

CREATE TABLE report_transition_hourly (
    site_id      text NOT NULL,
    hour         timestamptz NOT NULL,
    from_region  text NOT NULL,
    to_region    text NOT NULL,
    transitions  bigint NOT NULL,
    inferred     bigint NOT NULL,
    PRIMARY KEY (site_id, hour, from_region, to_region)
);
COMMENT ON TABLE report_transition_hourly IS 'Transitions per UTC hour (of transitions.at) and ordered region pair; inferred counts the steps on inferred paths among them.';

CREATE TABLE report_path_daily (
    site_id      text NOT NULL,
    day          timestamptz NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('journey', 'subpath')),
    length       integer NOT NULL,
    path         text NOT NULL,
    occurrences  bigint NOT NULL,
    PRIMARY KEY (site_id, day, kind, length, path)
);
COMMENT ON TABLE report_path_daily IS 'Per UTC day of journeys.started_at: whole journeys (kind journey: regions joined with '' > '') and every contiguous sub-path of 2 to 4 regions within them (kind subpath; a sub-path occurring twice in one journey counts twice).';

-- Visits overlapping a recent hour are found through exited_at (occupancy refresh).
CREATE INDEX report_visits_exited ON visits (site_id, exited_at);

-- Marks the hours a visit overlaps (entered_at's hour through exited_at's hour).
CREATE FUNCTION report_mark_visits() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT DISTINCT c.site_id, h
    FROM changed_rows c,
         generate_series(date_trunc('hour', c.entered_at, 'UTC'),
                         date_trunc('hour', greatest(c.exited_at, c.entered_at), 'UTC'), interval '1 hour') AS h
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE FUNCTION report_mark_transitions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT DISTINCT c.site_id, date_trunc('hour', c.at, 'UTC') FROM changed_rows c
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE FUNCTION report_mark_journeys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT DISTINCT c.site_id, date_trunc('hour', c.started_at, 'UTC') FROM changed_rows c
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE TRIGGER report_visits_insert AFTER INSERT ON visits
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_visits();
CREATE TRIGGER report_visits_update_new AFTER UPDATE ON visits
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_visits();
CREATE TRIGGER report_visits_update_old AFTER UPDATE ON visits
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_visits();
CREATE TRIGGER report_visits_delete AFTER DELETE ON visits
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_visits();

CREATE TRIGGER report_transitions_insert AFTER INSERT ON transitions
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_transitions();
CREATE TRIGGER report_transitions_delete AFTER DELETE ON transitions
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_transitions();

CREATE TRIGGER report_journeys_insert AFTER INSERT ON journeys
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_journeys();
CREATE TRIGGER report_journeys_update_new AFTER UPDATE ON journeys
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_journeys();
CREATE TRIGGER report_journeys_update_old AFTER UPDATE ON journeys
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_journeys();
CREATE TRIGGER report_journeys_delete AFTER DELETE ON journeys
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION report_mark_journeys();
