-- Waymark reports, part 16: one row per device and day / week in the refresh's membership state.
--
-- 0112 kept report_period_members: one row per (day or week, kind, device, region) with the number
-- of the period's hours the device appears in. A refreshed hour changes the members of every device
-- in it, and each changed member cost several index probes of that table (its count before, whether
-- the device was inside the period before and after, the entrances that heard it) and a write: at
-- ten million visits a month the table held 17 million rows (4.6 GB, more than the visits) and a
-- whole hour of late data changed about 15,000 members per period, each a random page or two.
--
-- report_period_devices keeps the same counts as one row per (day or week, device): the regions the
-- device has a visit entering in, each with its number of hours, and the entrances that heard it,
-- likewise (parallel arrays sorted by region). Everything the counts need about a device in a period
-- is in its one row, so the incremental path reads and writes one row per changed device (one index
-- probe, one insert, update or delete) and computes the changes of report_period_counts — distinct
-- devices per region and site-wide, devices heard and visitors — from the row before and after.
-- The table leaves a fifth of each page free, so that most of those writes are updates within the
-- page that need no new index entry. The full path builds the rows in one grouping. Nothing else changes: report_period_counts, the
-- dwell value counts and every rollup keep their rows.
--
-- Existing databases: the members are converted here in place (grouped per device), so no refresh
-- is needed and no hour is marked; at ten million visits a month that is one pass over the old
-- table (minutes).

CREATE TABLE report_period_devices (
    site_id        text NOT NULL,
    period         text NOT NULL CHECK (period IN ('day', 'week')),
    period_start   timestamptz NOT NULL,
    device_id      text COLLATE "C" NOT NULL,
    visit_regions  text[] COLLATE "C" NOT NULL,
    visit_hours    integer[] NOT NULL,
    heard_regions  text[] COLLATE "C" NOT NULL,
    heard_hours    integer[] NOT NULL,
    PRIMARY KEY (site_id, period, period_start, device_id),
    CHECK (cardinality(visit_regions) = cardinality(visit_hours) AND cardinality(heard_regions) = cardinality(heard_hours)),
    CHECK (cardinality(visit_regions) + cardinality(heard_regions) > 0)
) WITH (fillfactor = 80);
COMMENT ON TABLE report_period_devices IS 'Per UTC day and ISO week, each device with a visit entering a region in the period or heard at an entrance region in it: the input of report_period_counts (replaces report_period_members of 0112, one row per device instead of one per device and region). Distinct devices of a region are the rows listing it in visit_regions; a device is in the site''s period when visit_regions is not empty. Personal data (device ids): same access as visits.';
COMMENT ON COLUMN report_period_devices.visit_regions IS 'Regions the device has a visit (inferred or not) entering in, in the period; sorted (byte order), no repeats.';
COMMENT ON COLUMN report_period_devices.visit_hours IS 'For each element of visit_regions, the number of the period''s hours with such a visit (always > 0).';
COMMENT ON COLUMN report_period_devices.heard_regions IS 'Entrance regions whose gateways heard the device in the period (entrance_heard); sorted, no repeats.';
COMMENT ON COLUMN report_period_devices.heard_hours IS 'For each element of heard_regions, the number of the period''s hours it was heard there (always > 0).';

SET LOCAL work_mem = '256MB';
INSERT INTO report_period_devices (site_id, period, period_start, device_id, visit_regions, visit_hours, heard_regions, heard_hours)
SELECT site_id, period, period_start, device_id,
       coalesce(array_agg(region_id ORDER BY region_id) FILTER (WHERE kind = 'visit'), '{}'),
       coalesce(array_agg(hours ORDER BY region_id) FILTER (WHERE kind = 'visit'), '{}'),
       coalesce(array_agg(region_id ORDER BY region_id) FILTER (WHERE kind = 'heard'), '{}'),
       coalesce(array_agg(hours ORDER BY region_id) FILTER (WHERE kind = 'heard'), '{}')
FROM report_period_members
GROUP BY site_id, period, period_start, device_id;
DROP TABLE report_period_members;
ANALYZE report_period_devices;

-- Full path: the devices, counts and dwell value counts of every period in [p_lo, p_hi) (whole
-- periods) rebuilt from report_hour_members of all their hours.
CREATE OR REPLACE FUNCTION report_rebuild_period_members(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_period_devices
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    INSERT INTO report_period_devices (site_id, period, period_start, device_id, visit_regions, visit_hours, heard_regions, heard_hours)
    SELECT p_site, p_period, ps, device_id,
           coalesce(array_agg(region_id ORDER BY region_id) FILTER (WHERE kind = 'visit'), '{}'),
           coalesce(array_agg(hours ORDER BY region_id) FILTER (WHERE kind = 'visit'), '{}'),
           coalesce(array_agg(region_id ORDER BY region_id) FILTER (WHERE kind = 'heard'), '{}'),
           coalesce(array_agg(hours ORDER BY region_id) FILTER (WHERE kind = 'heard'), '{}')
    FROM (
        SELECT ps, kind, device_id, region_id, count(*)::integer AS hours
        FROM (
            SELECT date_trunc(p_period, h.hour, 'UTC') AS ps, 'visit' AS kind, x COLLATE "C" AS device_id, h.region_id COLLATE "C" AS region_id
            FROM report_hour_members h, unnest(h.devices) x
            WHERE h.site_id = p_site AND h.hour >= p_lo AND h.hour < p_hi
            UNION ALL
            SELECT date_trunc(p_period, h.hour, 'UTC'), 'heard', x COLLATE "C", h.region_id COLLATE "C"
            FROM report_hour_members h, unnest(h.heard) x
            WHERE h.site_id = p_site AND h.hour >= p_lo AND h.hour < p_hi
        ) s
        GROUP BY ps, kind, device_id, region_id
    ) m
    GROUP BY ps, device_id;

    DELETE FROM report_period_counts
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    -- A region counts the rows listing it; visitors are the heard ones with a visit anywhere.
    INSERT INTO report_period_counts (site_id, period, period_start, scope, region_id, devices, heard, visitors)
    SELECT p_site, p_period, ps, 'region', region_id, sum(devices), sum(heard), sum(visitors)
    FROM (
        SELECT d.period_start AS ps, r COLLATE "C" AS region_id, 1 AS devices, 0 AS heard, 0 AS visitors
        FROM report_period_devices d, unnest(d.visit_regions) r
        WHERE d.site_id = p_site AND d.period = p_period AND d.period_start >= p_lo AND d.period_start < p_hi
        UNION ALL
        SELECT d.period_start, r COLLATE "C", 0, 1, (cardinality(d.visit_regions) > 0)::integer
        FROM report_period_devices d, unnest(d.heard_regions) r
        WHERE d.site_id = p_site AND d.period = p_period AND d.period_start >= p_lo AND d.period_start < p_hi
    ) x
    GROUP BY ps, region_id
    UNION ALL
    SELECT p_site, p_period, d.period_start, 'site', '', count(*), 0, 0
    FROM report_period_devices d
    WHERE d.site_id = p_site AND d.period = p_period AND d.period_start >= p_lo AND d.period_start < p_hi
      AND cardinality(d.visit_regions) > 0
    GROUP BY d.period_start;

    DELETE FROM report_period_dwell
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    DELETE FROM report_period_dwell_bins
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    WITH vals AS (
        SELECT date_trunc(p_period, h.hour, 'UTC') AS ps, h.region_id COLLATE "C" AS region_id, x AS dwell_s, count(*) AS n
        FROM report_hour_members h, unnest(h.dwells) x
        WHERE h.site_id = p_site AND h.hour >= p_lo AND h.hour < p_hi
        GROUP BY 1, 2, 3
    ), exact AS (
        INSERT INTO report_period_dwell (site_id, period, period_start, region_id, bin, dwell_s, n)
        SELECT p_site, p_period, ps, region_id, report_dwell_bin(dwell_s), dwell_s, n FROM vals
    )
    INSERT INTO report_period_dwell_bins (site_id, period, period_start, region_id, bin, n)
    SELECT p_site, p_period, ps, region_id, report_dwell_bin(dwell_s), sum(n) FROM vals GROUP BY 3, 4, 5;
END $$;
COMMENT ON FUNCTION report_rebuild_period_members(text, text, timestamptz, timestamptz) IS 'Refresh step, full path: rebuilds report_period_devices, report_period_counts and report_period_dwell(_bins) of the days or weeks in [lo, hi) from report_hour_members of all their hours. Internal to waymark_report_refresh().';

-- Incremental path: the periods p_starts take the changes of their dirty hours p_hours: each
-- hour's old state (report_refresh_old_hours) counts -1, its new state (report_hour_members) +1.
-- The (device, region) hour counts that change are grouped per device and merged into the device's
-- row: a region whose count goes from 0 to positive joins its list, one that reaches 0 leaves it.
-- The count changes follow from each changed device's lists before and after: a region whose hour
-- count changed counts +1 if it joined the list, -1 if it left it (others cannot have); capture
-- visitors count -1 for every entrance that heard the device before if it was inside the period
-- then (any visit region), +1 for every one after if it is inside now.
-- Dwell values are added to and taken from the value and bin counts. Cost: the dirty hours' rows and
-- one index probe and one write per device whose hour counts change.
CREATE OR REPLACE FUNCTION report_apply_period_changes(p_site text, p_period text, p_starts timestamptz[], p_hours timestamptz[]) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
DECLARE
    broken bigint;
BEGIN
    WITH hour_rows AS MATERIALIZED (
        SELECT date_trunc(p_period, o.hour, 'UTC') AS ps, o.region_id COLLATE "C" AS region_id, o.devices, o.heard, -1 AS sign
        FROM report_refresh_old_hours o
        WHERE date_trunc(p_period, o.hour, 'UTC') = ANY (p_starts)
        UNION ALL
        SELECT date_trunc(p_period, n.hour, 'UTC'), n.region_id COLLATE "C", n.devices, n.heard, 1
        FROM report_hour_members n
        WHERE n.site_id = p_site AND n.hour = ANY (p_hours) AND date_trunc(p_period, n.hour, 'UTC') = ANY (p_starts)
    ), steps AS (
        SELECT ps, 'visit' AS kind, x COLLATE "C" AS device_id, region_id, sign FROM hour_rows, unnest(devices) x
        UNION ALL
        SELECT ps, 'heard', x COLLATE "C", region_id, sign FROM hour_rows, unnest(heard) x
    ), deltas AS (
        -- Per device, the regions whose hour count changes and by how much (parallel arrays: the
        -- two aggregates of a FILTER see the same rows in the same order).
        SELECT ps, device_id,
               array_agg(region_id) FILTER (WHERE kind = 'visit') AS visit_regions,
               array_agg(delta) FILTER (WHERE kind = 'visit') AS visit_deltas,
               array_agg(region_id) FILTER (WHERE kind = 'heard') AS heard_regions,
               array_agg(delta) FILTER (WHERE kind = 'heard') AS heard_deltas
        FROM (SELECT ps, kind, device_id, region_id, sum(sign)::integer AS delta FROM steps
              GROUP BY 1, 2, 3, 4 HAVING sum(sign) <> 0) c
        GROUP BY ps, device_id
    ), changed AS MATERIALIZED (
        -- Each such device's row before (empty lists when it had none) and after.
        -- The regions whose hour counts change (visit_changed, heard_changed) are the only ones
        -- that can join or leave the device's lists. A device without heard changes (most) keeps
        -- its heard lists as they are.
        SELECT c.ps, c.device_id, d.device_id IS NOT NULL AS existed,
               coalesce(d.visit_regions, '{}') AS visit_before, coalesce(d.heard_regions, '{}') AS heard_before,
               v.regions AS visit_after, v.hours AS visit_hours,
               CASE WHEN c.heard_regions IS NULL THEN coalesce(d.heard_regions, '{}') ELSE h.regions END AS heard_after,
               CASE WHEN c.heard_regions IS NULL THEN coalesce(d.heard_hours, '{}') ELSE h.hours END AS heard_hours,
               coalesce(c.visit_regions, '{}') AS visit_changed, coalesce(c.heard_regions, '{}') AS heard_changed,
               v.negative OR (c.heard_regions IS NOT NULL AND h.negative) AS negative
        FROM deltas c
        LEFT JOIN report_period_devices d
               ON d.site_id = p_site AND d.period = p_period AND d.period_start = c.ps AND d.device_id = c.device_id
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(r ORDER BY r) FILTER (WHERE n > 0), '{}') AS regions,
                   coalesce(array_agg(n ORDER BY r) FILTER (WHERE n > 0), '{}') AS hours, coalesce(bool_or(n < 0), false) AS negative
            FROM (SELECT r COLLATE "C" AS r, sum(n)::integer AS n
                  FROM (SELECT * FROM unnest(coalesce(d.visit_regions, '{}'), coalesce(d.visit_hours, '{}')) AS a(r, n)
                        UNION ALL
                        SELECT * FROM unnest(coalesce(c.visit_regions, '{}'), coalesce(c.visit_deltas, '{}'))) x
                  GROUP BY 1) y
        ) v
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(r ORDER BY r) FILTER (WHERE n > 0), '{}') AS regions,
                   coalesce(array_agg(n ORDER BY r) FILTER (WHERE n > 0), '{}') AS hours, coalesce(bool_or(n < 0), false) AS negative
            FROM (SELECT r COLLATE "C" AS r, sum(n)::integer AS n
                  FROM (SELECT * FROM unnest(coalesce(d.heard_regions, '{}'), coalesce(d.heard_hours, '{}')) AS a(r, n)
                        UNION ALL
                        SELECT * FROM unnest(coalesce(c.heard_regions, '{}'), coalesce(c.heard_deltas, '{}'))) x
                  WHERE c.heard_regions IS NOT NULL
                  GROUP BY 1) y
        ) h
    ), count_changes AS (
        SELECT ps, 'region' AS scope, region_id, sum(devices) AS devices, sum(heard) AS heard, sum(visitors) AS visitors
        FROM (
            -- A changed region counts +1 when it joined the device's list, -1 when it left it.
            SELECT ps, r COLLATE "C" AS region_id, (r = ANY (visit_after))::integer - (r = ANY (visit_before))::integer AS devices,
                   0 AS heard, 0 AS visitors
            FROM changed, unnest(visit_changed) r
            UNION ALL
            SELECT ps, r COLLATE "C", 0, (r = ANY (heard_after))::integer - (r = ANY (heard_before))::integer, 0
            FROM changed, unnest(heard_changed) r
            -- Visitors: every entrance that heard the device before counts -1 if it was inside then,
            -- every one after +1 if it is inside now (an entrance and status that stay net 0).
            UNION ALL
            SELECT ps, r COLLATE "C", 0, 0, -(cardinality(visit_before) > 0)::integer FROM changed, unnest(heard_before) r
            UNION ALL
            SELECT ps, r COLLATE "C", 0, 0, (cardinality(visit_after) > 0)::integer FROM changed, unnest(heard_after) r
        ) x
        GROUP BY ps, region_id
        UNION ALL
        SELECT ps, 'site', '', sum((cardinality(visit_after) > 0)::integer - (cardinality(visit_before) > 0)::integer), 0, 0
        FROM changed GROUP BY ps
    ), counted AS (
        INSERT INTO report_period_counts AS t (site_id, period, period_start, scope, region_id, devices, heard, visitors)
        SELECT p_site, p_period, ps, scope, region_id, devices, heard, visitors
        FROM count_changes WHERE devices <> 0 OR heard <> 0 OR visitors <> 0
        ON CONFLICT (site_id, period, period_start, scope, region_id) DO UPDATE
        SET devices = t.devices + excluded.devices, heard = t.heard + excluded.heard, visitors = t.visitors + excluded.visitors
    ), left_period AS (
        DELETE FROM report_period_devices d USING changed c
        WHERE c.existed AND cardinality(c.visit_after) = 0 AND cardinality(c.heard_after) = 0
          AND d.site_id = p_site AND d.period = p_period AND d.period_start = c.ps AND d.device_id = c.device_id
    ), stayed AS (
        INSERT INTO report_period_devices AS d (site_id, period, period_start, device_id, visit_regions, visit_hours, heard_regions, heard_hours)
        SELECT p_site, p_period, ps, device_id, visit_after, visit_hours, heard_after, heard_hours
        FROM changed WHERE cardinality(visit_after) > 0 OR cardinality(heard_after) > 0
        ON CONFLICT (site_id, period, period_start, device_id) DO UPDATE
        SET visit_regions = excluded.visit_regions, visit_hours = excluded.visit_hours,
            heard_regions = excluded.heard_regions, heard_hours = excluded.heard_hours
    )
    SELECT count(*) INTO broken FROM changed WHERE negative;
    IF broken > 0 THEN
        RAISE EXCEPTION 'report rollup state is inconsistent: % period device(s) of % would have a negative hour count', broken, p_site
            USING ERRCODE = 'XX000', HINT = 'rebuild the report rollups: SELECT waymark_report_rebuild(' || quote_literal(p_site) || ');';
    END IF;
    -- Counts take deltas (so they carry no CHECK constraint, which INSERT … ON CONFLICT would test
    -- on the delta itself): check them here; rows that reached zero go.
    SELECT count(*) INTO broken FROM report_period_counts
    WHERE site_id = p_site AND period = p_period AND period_start = ANY (p_starts)
      AND (devices < 0 OR heard < 0 OR visitors < 0 OR visitors > heard);
    IF broken > 0 THEN
        RAISE EXCEPTION 'report rollup state is inconsistent: % period count(s) of % would be negative', broken, p_site
            USING ERRCODE = 'XX000', HINT = 'rebuild the report rollups: SELECT waymark_report_rebuild(' || quote_literal(p_site) || ');';
    END IF;
    DELETE FROM report_period_counts
    WHERE site_id = p_site AND period = p_period AND period_start = ANY (p_starts)
      AND devices = 0 AND heard = 0 AND visitors = 0;

    WITH hour_rows AS (
        SELECT date_trunc(p_period, o.hour, 'UTC') AS ps, o.region_id COLLATE "C" AS region_id, o.dwells, -1 AS sign
        FROM report_refresh_old_hours o
        WHERE date_trunc(p_period, o.hour, 'UTC') = ANY (p_starts)
        UNION ALL
        SELECT date_trunc(p_period, n.hour, 'UTC'), n.region_id COLLATE "C", n.dwells, 1
        FROM report_hour_members n
        WHERE n.site_id = p_site AND n.hour = ANY (p_hours) AND date_trunc(p_period, n.hour, 'UTC') = ANY (p_starts)
    ), changes AS MATERIALIZED (
        SELECT c.ps, c.region_id, c.bin, c.dwell_s, c.delta, coalesce(d.n, 0) + c.delta AS n
        FROM (SELECT ps, region_id, report_dwell_bin(x) AS bin, x AS dwell_s, sum(sign) AS delta
              FROM hour_rows, unnest(dwells) x GROUP BY 1, 2, 4 HAVING sum(sign) <> 0) c
        LEFT JOIN report_period_dwell d
               ON d.site_id = p_site AND d.period = p_period AND d.period_start = c.ps
              AND d.region_id = c.region_id AND d.bin = c.bin AND d.dwell_s = c.dwell_s
    ), bin_changes AS MATERIALIZED (
        SELECT c.ps, c.region_id, c.bin, coalesce(b.n, 0) + c.delta AS n
        FROM (SELECT ps, region_id, bin, sum(delta) AS delta FROM changes GROUP BY 1, 2, 3 HAVING sum(delta) <> 0) c
        LEFT JOIN report_period_dwell_bins b
               ON b.site_id = p_site AND b.period = p_period AND b.period_start = c.ps
              AND b.region_id = c.region_id AND b.bin = c.bin
    ), gone AS (
        DELETE FROM report_period_dwell d USING changes c
        WHERE c.n = 0 AND d.site_id = p_site AND d.period = p_period AND d.period_start = c.ps
          AND d.region_id = c.region_id AND d.bin = c.bin AND d.dwell_s = c.dwell_s
    ), kept AS (
        INSERT INTO report_period_dwell AS d (site_id, period, period_start, region_id, bin, dwell_s, n)
        SELECT p_site, p_period, ps, region_id, bin, dwell_s, n FROM changes WHERE n > 0
        ON CONFLICT (site_id, period, period_start, region_id, bin, dwell_s) DO UPDATE SET n = excluded.n
    ), bins_gone AS (
        DELETE FROM report_period_dwell_bins b USING bin_changes c
        WHERE c.n = 0 AND b.site_id = p_site AND b.period = p_period AND b.period_start = c.ps
          AND b.region_id = c.region_id AND b.bin = c.bin
    ), bins_kept AS (
        INSERT INTO report_period_dwell_bins AS b (site_id, period, period_start, region_id, bin, n)
        SELECT p_site, p_period, ps, region_id, bin, n FROM bin_changes WHERE n > 0
        ON CONFLICT (site_id, period, period_start, region_id, bin) DO UPDATE SET n = excluded.n
    )
    SELECT (SELECT count(*) FROM changes WHERE n < 0) + (SELECT count(*) FROM bin_changes WHERE n < 0) INTO broken;
    IF broken > 0 THEN
        RAISE EXCEPTION 'report rollup state is inconsistent: % dwell count(s) of % would be negative', broken, p_site
            USING ERRCODE = 'XX000', HINT = 'rebuild the report rollups: SELECT waymark_report_rebuild(' || quote_literal(p_site) || ');';
    END IF;
END $$;
COMMENT ON FUNCTION report_apply_period_changes(text, text, timestamptz[], timestamptz[]) IS 'Refresh step, incremental path: applies to the days or weeks p_starts the difference between the old state of their dirty hours p_hours (report_refresh_old_hours) and the new one (report_hour_members): one row of report_period_devices per device whose hour counts change, the counts and capture visitors that follow from it, and dwell value counts. Internal to waymark_report_refresh().';

-- As in 0114, with report_period_devices in place of report_period_members.
CREATE OR REPLACE FUNCTION waymark_report_refresh(p_site text DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET TimeZone = 'UTC'
    SET work_mem = '256MB' SET plan_cache_mode = 'force_custom_plan' SET jit = off AS $$
DECLARE
    s text;
    hours timestamptz[];
    r record;
    p text;
    whole_days timestamptz[];
    changed_days timestamptz[];
    whole_weeks timestamptz[];
    changed_weeks timestamptz[];
    rebuilt_whole boolean := false;
    refreshed integer := 0;
    -- History before the retention horizon is gone: its rollups stay as they were.
    kept_from timestamptz := coalesce((SELECT h.kept_from FROM history_horizon h), '-infinity');
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('waymark_report_refresh'));
    FOR s IN SELECT DISTINCT site_id FROM report_dirty_hours WHERE p_site IS NULL OR site_id = p_site LOOP
        WITH taken AS (DELETE FROM report_dirty_hours WHERE site_id = s RETURNING hour)
        SELECT array_agg(DISTINCT hour) INTO hours FROM taken;
        hours := ARRAY(SELECT h FROM unnest(hours) h WHERE h >= kept_from);
        CONTINUE WHEN coalesce(cardinality(hours), 0) = 0;

        -- Days and weeks with half or more of their hours dirty (a bulk load, a first refresh) are
        -- rebuilt from all their hours; the others take just their dirty hours' changes.
        SELECT array_agg(ps) FILTER (WHERE 2 * n >= 24), array_agg(ps) FILTER (WHERE 2 * n < 24)
        INTO whole_days, changed_days
        FROM (SELECT date_trunc('day', h, 'UTC') AS ps, count(*) AS n FROM unnest(hours) h GROUP BY 1) x;
        SELECT array_agg(ps) FILTER (WHERE 2 * n >= 168), array_agg(ps) FILTER (WHERE 2 * n < 168)
        INTO whole_weeks, changed_weeks
        FROM (SELECT date_trunc('week', h, 'UTC') AS ps, count(*) AS n FROM unnest(hours) h GROUP BY 1) x;

        -- The dirty hours' state moves aside (their old contribution), then is rebuilt with the hour rows.
        TRUNCATE report_refresh_old_hours, report_refresh_old_paths;
        WITH old AS (
            DELETE FROM report_hour_members WHERE site_id = s AND hour = ANY (hours)
            RETURNING hour, region_id, devices, dwells, heard
        )
        INSERT INTO report_refresh_old_hours SELECT * FROM old;

        FOR r IN SELECT * FROM report_runs(hours, interval '1 hour') LOOP
            PERFORM report_rebuild_hours(s, r.lo, r.hi);
            PERFORM report_rebuild_hour_members(s, r.lo, r.hi);
            PERFORM report_rebuild_moves(s, r.lo, r.hi);
            PERFORM report_rebuild_path_hours(s, r.lo, r.hi, changed_days);
            PERFORM report_rebuild_capture(s, 'hour', r.lo, r.hi);
        END LOOP;

        FOR r IN SELECT * FROM report_runs(whole_days, interval '1 day') LOOP
            PERFORM report_rebuild_period_members(s, 'day', r.lo, r.hi);
            PERFORM report_rebuild_path_days(s, r.lo, r.hi);
        END LOOP;
        IF changed_days IS NOT NULL THEN
            PERFORM report_apply_period_changes(s, 'day', changed_days, hours);
            PERFORM report_apply_path_changes(s, changed_days, hours);
        END IF;
        FOR r IN SELECT * FROM report_runs(whole_weeks, interval '1 week') LOOP
            PERFORM report_rebuild_period_members(s, 'week', r.lo, r.hi);
            rebuilt_whole := true;
        END LOOP;
        IF changed_weeks IS NOT NULL THEN
            PERFORM report_apply_period_changes(s, 'week', changed_weeks, hours);
        END IF;

        FOREACH p IN ARRAY ARRAY['day', 'week'] LOOP
            FOR r IN SELECT * FROM report_runs(ARRAY(SELECT date_trunc(p, h, 'UTC') FROM unnest(hours) h), ('1 ' || p)::interval) LOOP
                PERFORM report_rebuild_periods(s, p, r.lo, r.hi);
                PERFORM report_rebuild_capture_periods(s, p, r.lo, r.hi);
            END LOOP;
        END LOOP;
        TRUNCATE report_refresh_old_hours, report_refresh_old_paths;
        refreshed := refreshed + cardinality(hours);
    END LOOP;
    IF rebuilt_whole THEN
        -- After rebuilding whole weeks (a bulk load, a first refresh) the state tables may have
        -- grown from nothing: give the planner their sizes now (a second or two), so that the next
        -- incremental refresh probes their indexes instead of scanning them.
        ANALYZE report_hour_members, report_period_devices, report_period_counts, report_period_dwell,
            report_period_dwell_bins, report_path_daily;
    END IF;
    RETURN refreshed;
END $$;
COMMENT ON FUNCTION waymark_report_refresh(text) IS 'Brings the report rollups up to date for the hours changed since the last call (one site, or all when NULL); returns how many hours it rebuilt. Cost follows the changed hours: day and week figures are updated from those hours'' changes (schema 0112), touching one row per device whose day or week membership changed (schema 0115). Hours before the retention horizon (history_horizon) are left as they are: their history was dropped (schema 0114). Safe to call at any time and concurrently; runs with the rights of the schema owner so the read-only report role may call it.';

-- As in 0114, with report_period_devices in place of report_period_members.
CREATE OR REPLACE FUNCTION waymark_report_rebuild(p_site text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    kept_from timestamptz := coalesce((SELECT h.kept_from FROM history_horizon h), '-infinity');
    -- The ISO week containing the horizon begins before it (unless the horizon is a Monday).
    week0 timestamptz := date_trunc('week', kept_from, 'UTC');
    refreshed integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM sites WHERE site_id = p_site) THEN
        RAISE EXCEPTION 'unknown site %', quote_literal(p_site) USING ERRCODE = '22023',
            HINT = 'sites in this database: ' || coalesce((SELECT string_agg(site_id, ', ' ORDER BY site_id) FROM sites), '(none)');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('waymark_report_refresh'));
    DELETE FROM report_region_rollup WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_site_rollup WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_capture_rollup WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_transition_hourly WHERE site_id = p_site AND hour >= kept_from;
    DELETE FROM report_path_hourly WHERE site_id = p_site AND hour >= kept_from;
    DELETE FROM report_path_daily WHERE site_id = p_site AND day >= kept_from;
    DELETE FROM report_device_first_visit WHERE site_id = p_site AND first_visit_at >= kept_from;
    DELETE FROM report_hour_members WHERE site_id = p_site AND hour >= kept_from;
    DELETE FROM report_period_devices WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_period_counts WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_period_dwell WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_period_dwell_bins WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT p_site, h FROM (
        SELECT generate_series(date_trunc('hour', v.entered_at, 'UTC'),
                               date_trunc('hour', greatest(v.exited_at, v.entered_at), 'UTC'), interval '1 hour') AS h
        FROM visits v WHERE v.site_id = p_site
        UNION SELECT date_trunc('hour', t.at, 'UTC') FROM transitions t WHERE t.site_id = p_site
        UNION SELECT date_trunc('hour', j.started_at, 'UTC') FROM journeys j WHERE j.site_id = p_site
        UNION SELECT e.hour FROM entrance_heard e WHERE e.site_id = p_site
    ) x
    WHERE h >= kept_from
    ON CONFLICT DO NOTHING;
    refreshed := waymark_report_refresh(p_site);
    IF week0 < kept_from AND kept_from < 'infinity' THEN
        -- Its figures are a function of its hours' state, before and after the horizon.
        PERFORM report_rebuild_period_members(p_site, 'week', week0, week0 + interval '1 week');
        PERFORM report_rebuild_periods(p_site, 'week', week0, week0 + interval '1 week');
        PERFORM report_rebuild_capture_periods(p_site, 'week', week0, week0 + interval '1 week');
    END IF;
    RETURN refreshed;
END $$;
COMMENT ON FUNCTION waymark_report_rebuild(text) IS 'Rebuilds the report rollups of the site from visits, transitions, journeys and entrance_heard (as a first full refresh would) and returns the number of hours rebuilt. After retention (history_horizon) only from the horizon on: the rollups of the dropped history are kept as they are, the week containing the horizon is recomputed from its hours. For recovery when the refresh reports an inconsistent state; takes minutes on a large history.';
