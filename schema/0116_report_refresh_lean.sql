-- Waymark reports, part 17: the refresh of one hour does the hour's work once and touches only what
-- changed in its day and week.
--
-- Measured at ten million visits (docs/reports.md "Speed", auto_explain on a kept benchmark
-- database): an hour with nothing changed in it still cost 0.8 s, and much of every refresh went
-- to steps whose cost does not depend on what changed. Per refreshed hour, 0115
--
--   read the hour's visits four times    (hour rows, hour state, first visits, hourly capture);
--   locked every device's first-visit    INSERT … ON CONFLICT DO UPDATE … WHERE locks each
--   row                                  conflicting row even when the WHERE rejects the update:
--                                        23,000 row locks, each a WAL record, for a busy hour;
--   recomputed the first visit of every  a sub-query over all its visits per device, then a join
--   device first seen in the hour        that read the whole first-visit table;
--   wrote every changed device with      a speculative insertion even for devices new to the
--   INSERT … ON CONFLICT                 period (twice a plain INSERT's time for 13,888 rows);
--   took the unchanged (hour, region)    so an hour with nothing changed still unnested and
--   state out and in again               grouped all its devices twice per period;
--   recomputed the exact dwell           walking every 10-s bin of the week (about 37,000 rows, with
--   percentiles of every region          numeric running sums and a VALUES join per bin) although
--                                        only the regions whose dwell values changed can move.
--
-- This migration replaces those steps; the rows they write are the same (ReportRefreshTests
-- compares every table with a rebuild):
--
--   report_rebuild_hours      one statement reads the hour's visits once and writes the hour rows,
--                             the hour's state (report_hour_members, dwell values now sorted) and
--                             the hourly capture (report_rebuild_hour_members and
--                             report_rebuild_capture are dropped). Hours are cut with date_bin
--                             (plain arithmetic; equal to date_trunc(…, 'UTC') for hours and days).
--   report_rebuild_moves      the first-visit table is read per device with an index probe and
--                             written only where the hour's first visit is earlier than the
--                             recorded one (or none is); a recorded first visit in the hour is
--                             recomputed only when no visit of the hour still starts at it.
--   report_apply_period_changes
--                             leaves out the (hour, region) state rows that did not change; writes
--                             devices new to the period with a plain INSERT; notes the regions
--                             whose dwell values changed (report_refresh_dwell_changed).
--   report_refresh_periods    the incremental path's day and week rows: additive figures from the
--                             hour rows as before, counts from report_period_counts, and the exact
--                             percentiles recomputed only for the noted regions (the others keep
--                             theirs). report_dwell_percentiles walks the bins with float8 running
--                             sums (exact for counts below 2^53) and finds the four ranks' bins
--                             in that one pass.
--   waymark_report_refresh    calls these, and rebuilds a long run of dirty hours (a bulk load, a
--                             first refresh) a day at a time, so that the one read of a run's
--                             visits fits in memory.
--
-- Existing databases: nothing is converted and no hour is marked; state rows written before this
-- migration (unsorted dwell values) simply count as changed the next time their hour is refreshed.

-- Scratch table of the running refresh (see report_refresh_old_hours, 0112): the day / week and
-- region pairs whose dwell value counts changed in this refresh.
CREATE UNLOGGED TABLE report_refresh_dwell_changed (
    period        text NOT NULL,
    period_start  timestamptz NOT NULL,
    region_id     text COLLATE "C" NOT NULL,
    PRIMARY KEY (period, period_start, region_id)
);
COMMENT ON TABLE report_refresh_dwell_changed IS 'Scratch table of waymark_report_refresh(): the day / week and region pairs whose dwell value counts the incremental path changed, i.e. whose exact percentiles must be recomputed; empty outside a refresh.';

-- Scratch table of the running refresh: each device's first visit entering in the rebuilt hours,
-- written by report_rebuild_hours for report_rebuild_moves (which so does not read the hours'
-- visits again: on a busy database each read of an hour's visits is tens of thousands of page
-- reads).
CREATE UNLOGGED TABLE report_refresh_hour_first (
    device_id  text NOT NULL,  -- the collation of report_device_first_visit, whose index it probes
    first_at   timestamptz NOT NULL
);
COMMENT ON TABLE report_refresh_hour_first IS 'Scratch table of waymark_report_refresh(): per device, its earliest visit entering in each run of rebuilt hours (report_rebuild_hours writes it, report_rebuild_moves reads it); empty outside a refresh.';

-- Hour rows of report_region_rollup and report_site_rollup, the hour state (report_hour_members)
-- and the hourly capture rows for every hour in [p_lo, p_hi), from one read of the hours' visits
-- (as 0113, 0112 and 0109 computed them in three statements). The caller has moved the old state
-- rows aside.
CREATE OR REPLACE FUNCTION report_rebuild_hours(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
DECLARE
    -- No visit entering before this can overlap the run (see report_visit_span).
    earliest timestamptz := p_lo - coalesce((SELECT s.longest FROM report_visit_span s WHERE s.site_id = p_site), interval '0');
    -- date_bin from a UTC midnight cuts UTC hours exactly as date_trunc('hour', t, 'UTC') does,
    -- without the time zone conversion per value.
    origin constant timestamptz := '2000-01-01 00:00+00';
BEGIN
    DELETE FROM report_region_rollup
    WHERE site_id = p_site AND period = 'hour' AND period_start >= p_lo AND period_start < p_hi;
    DELETE FROM report_site_rollup
    WHERE site_id = p_site AND period = 'hour' AND period_start >= p_lo AND period_start < p_hi;
    DELETE FROM report_capture_rollup
    WHERE site_id = p_site AND period = 'hour' AND period_start >= p_lo AND period_start < p_hi;

    WITH v AS MATERIALIZED (
        -- The visits entering in the run, read once for everything below.
        SELECT date_bin('1 hour', v.entered_at, origin) AS ps, v.region_id COLLATE "C" AS region_id,
               v.device_id COLLATE "C" AS device_id, v.entered_at, v.exited_at, v.dwell_s, v.inferred
        FROM visits v
        WHERE v.site_id = p_site AND v.entered_at >= p_lo AND v.entered_at < p_hi
    ), entered AS (
        -- Per hour and region; the distinct devices are the hour state's device list.
        SELECT ps, region_id,
               count(*) AS visits, count(*) FILTER (WHERE inferred) AS inferred_visits,
               array_agg(DISTINCT device_id) AS devices,
               count(*) FILTER (WHERE NOT inferred) AS dwell_visits,
               coalesce(sum(dwell_s) FILTER (WHERE NOT inferred), 0) AS dwell_total_s,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY dwell_s) FILTER (WHERE NOT inferred) AS p50,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY dwell_s) FILTER (WHERE NOT inferred) AS p90,
               coalesce(array_agg(dwell_s ORDER BY dwell_s) FILTER (WHERE NOT inferred), '{}') AS dwells,
               count(*) FILTER (WHERE NOT inferred AND dwell_s < 300) AS b0,
               count(*) FILTER (WHERE NOT inferred AND dwell_s >= 300 AND dwell_s < 1200) AS b1,
               count(*) FILTER (WHERE NOT inferred AND dwell_s >= 1200 AND dwell_s < 3600) AS b2,
               count(*) FILTER (WHERE NOT inferred AND dwell_s >= 3600 AND dwell_s < 21600) AS b3,
               count(*) FILTER (WHERE NOT inferred AND dwell_s >= 21600) AS b4
        FROM v GROUP BY ps, region_id
    ), inside AS (
        -- Devices with a visit (any region) entering in the hour: site rows and capture visitors.
        SELECT DISTINCT ps, device_id FROM v
    ), site_rows AS (
        INSERT INTO report_site_rollup (site_id, period, period_start, visits, devices)
        SELECT p_site, 'hour', e.ps, e.visits, i.devices
        FROM (SELECT ps, sum(visits) AS visits FROM entered GROUP BY ps) e
        JOIN (SELECT ps, count(*) AS devices FROM inside GROUP BY ps) i USING (ps)
    ), heard AS (
        SELECT DISTINCT date_bin('1 hour', e.hour, origin) AS ps, e.region_id COLLATE "C" AS region_id, e.device_id COLLATE "C" AS device_id
        FROM entrance_heard e
        WHERE e.site_id = p_site AND e.hour >= p_lo AND e.hour < p_hi
    ), capture_rows AS (
        INSERT INTO report_capture_rollup (site_id, period, period_start, region_id, heard, visitors)
        SELECT p_site, 'hour', h.ps, h.region_id, count(*), count(i.device_id)
        FROM heard h LEFT JOIN inside i ON i.ps = h.ps AND i.device_id = h.device_id
        GROUP BY h.ps, h.region_id
    ), state_rows AS (
        INSERT INTO report_hour_members (site_id, hour, region_id, devices, dwells, heard)
        SELECT p_site, ps, region_id, coalesce(e.devices, '{}'), coalesce(e.dwells, '{}'), coalesce(h.heard, '{}')
        FROM entered e
        FULL JOIN (SELECT ps, region_id, array_agg(device_id ORDER BY device_id) AS heard FROM heard GROUP BY ps, region_id) h
            USING (ps, region_id)
    ), first_rows AS (
        INSERT INTO report_refresh_hour_first (device_id, first_at)
        SELECT device_id, min(entered_at) FROM v GROUP BY device_id
    ), stays AS MATERIALIZED (
        -- Each visit's presence, clipped to the run: those entering in it (read above), and those
        -- that entered before it and are still there when it starts.
        SELECT region_id, entered_at AS s, least(exited_at, p_hi) AS e FROM v WHERE exited_at > entered_at
        UNION ALL
        SELECT v.region_id COLLATE "C", p_lo, least(v.exited_at, p_hi)
        FROM visits v
        WHERE v.site_id = p_site AND v.entered_at >= earliest AND v.entered_at < p_lo
          AND v.exited_at > p_lo AND v.exited_at > v.entered_at
    ), cut AS (
        SELECT region_id, s, e, date_bin('1 hour', s, origin) AS first_hour,
               date_bin('1 hour', e - interval '1 microsecond', origin) AS last_hour
        FROM stays
    ), spans AS (
        -- The stays cut at hour boundaries (most lie within one hour and need no cutting).
        SELECT region_id, first_hour AS hour, s, e, false AS carried FROM cut WHERE first_hour = last_hour
        UNION ALL
        SELECT region_id, h.hour, greatest(s, h.hour), least(e, h.hour + interval '1 hour'), s < h.hour
        FROM cut
        CROSS JOIN LATERAL generate_series(first_hour, last_hour, interval '1 hour') AS h(hour)
        WHERE first_hour <> last_hour
    ), presence AS (
        -- Device-seconds per hour, and the devices present at the hour's start that came in earlier.
        SELECT region_id, hour AS ps, sum(extract(epoch FROM e - s)) AS presence_s, count(*) FILTER (WHERE carried) AS carried
        FROM spans GROUP BY 1, 2
    ), moves AS (
        SELECT region_id, s AS t, 1 AS delta FROM stays
        UNION ALL
        SELECT region_id, e AS t, -1 AS delta FROM stays WHERE e < p_hi
    ), levels AS (
        -- Devices present just after each move, sweeping each region in time order with leaves
        -- before enters at the same instant (ROWS: the last of simultaneous enters sees them all).
        SELECT region_id, t, delta,
               sum(delta) OVER (PARTITION BY region_id ORDER BY t, delta ROWS UNBOUNDED PRECEDING) AS level
        FROM moves
    ), peaks AS (
        -- The peak of an hour is reached after an enter in it, or is the level at its start.
        SELECT region_id, date_bin('1 hour', t, origin) AS ps, max(level) AS peak FROM levels WHERE delta = 1 GROUP BY 1, 2
    )
    INSERT INTO report_region_rollup (site_id, period, period_start, region_id, visits, inferred_visits, devices,
        dwell_visits, dwell_total_s, dwell_p50_s, dwell_p90_s,
        dwell_under_5m, dwell_5_20m, dwell_20_60m, dwell_1_6h, dwell_6h_plus, presence_s, peak_devices)
    SELECT p_site, 'hour', ps, region_id, coalesce(en.visits, 0), coalesce(en.inferred_visits, 0),
           coalesce(cardinality(en.devices), 0), coalesce(en.dwell_visits, 0), coalesce(en.dwell_total_s, 0), en.p50, en.p90,
           coalesce(en.b0, 0), coalesce(en.b1, 0), coalesce(en.b2, 0), coalesce(en.b3, 0), coalesce(en.b4, 0),
           coalesce(pr.presence_s, 0), greatest(pr.carried, pk.peak, 0)
    FROM entered en
    FULL JOIN presence pr USING (ps, region_id)
    LEFT JOIN peaks pk USING (ps, region_id);
END $$;
COMMENT ON FUNCTION report_rebuild_hours(text, timestamptz, timestamptz) IS 'Refresh step: rewrites, for the hours in [lo, hi), the hour rows of report_region_rollup, report_site_rollup and report_capture_rollup and the hour state report_hour_members (whose old rows the caller has moved aside), from one read of the visits entering in them (and the visits present, found through report_visit_span) and entrance_heard. Internal to waymark_report_refresh().';

DROP FUNCTION report_rebuild_hour_members(text, timestamptz, timestamptz);  -- now part of report_rebuild_hours
DROP FUNCTION report_rebuild_capture(text, text, timestamptz, timestamptz);  -- hours: report_rebuild_hours; days, weeks: report_rebuild_capture_periods

-- Transitions per hour and region pair, and first visits, for the hours in [p_lo, p_hi) (as 0112).
CREATE OR REPLACE FUNCTION report_rebuild_moves(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
DECLARE
    origin constant timestamptz := '2000-01-01 00:00+00';
    stale record;
BEGIN
    DELETE FROM report_transition_hourly WHERE site_id = p_site AND hour >= p_lo AND hour < p_hi;
    INSERT INTO report_transition_hourly (site_id, hour, from_region, to_region, transitions, inferred)
    SELECT p_site, date_bin('1 hour', t.at, origin), t.from_region, t.to_region, count(*), count(*) FILTER (WHERE t.inferred)
    FROM transitions t
    WHERE t.site_id = p_site AND t.at >= p_lo AND t.at < p_hi
    GROUP BY 2, 3, 4;

    -- A first visit recorded in these hours stays right while a visit of these hours still starts
    -- at it (an earlier visit written since is in a refreshed hour too, and lowers it below). The
    -- others — their visit was deleted or moved: a handful per refresh — are recomputed from all
    -- the device's visits, one by one.
    FOR stale IN
        WITH hour_first AS (
            SELECT h.device_id, h.first_at FROM report_refresh_hour_first h WHERE h.first_at >= p_lo AND h.first_at < p_hi
        )
        SELECT f.device_id,
               (SELECT min(v.entered_at) FROM visits v WHERE v.site_id = p_site AND v.device_id = f.device_id) AS first_visit_at
        FROM report_device_first_visit f
        LEFT JOIN hour_first h ON h.device_id = f.device_id
        WHERE f.site_id = p_site AND f.first_visit_at >= p_lo AND f.first_visit_at < p_hi
          AND h.first_at IS DISTINCT FROM f.first_visit_at
    LOOP
        IF stale.first_visit_at IS NULL THEN
            DELETE FROM report_device_first_visit WHERE site_id = p_site AND device_id = stale.device_id;
        ELSE
            UPDATE report_device_first_visit SET first_visit_at = stale.first_visit_at
            WHERE site_id = p_site AND device_id = stale.device_id AND first_visit_at <> stale.first_visit_at;
        END IF;
    END LOOP;

    -- Each device of these hours: one index probe (a scalar sub-query, so never a scan of the
    -- whole table), and a write only where its first visit moves earlier or is new. (0112's
    -- ON CONFLICT … DO UPDATE … WHERE locked every conflicting row, even when it did not update.)
    INSERT INTO report_device_first_visit AS f (site_id, device_id, first_visit_at)
    SELECT p_site, h.device_id, h.first_at
    FROM (SELECT * FROM report_refresh_hour_first h WHERE h.first_at >= p_lo AND h.first_at < p_hi
          ORDER BY h.device_id) h  -- probes in key order: neighbouring devices share index pages
    WHERE h.first_at < coalesce((SELECT o.first_visit_at FROM report_device_first_visit o
                                 WHERE o.site_id = p_site AND o.device_id = h.device_id), 'infinity')
    ON CONFLICT (site_id, device_id) DO UPDATE SET first_visit_at = excluded.first_visit_at
        WHERE excluded.first_visit_at < f.first_visit_at;
    -- Consumed: the next run starts with an empty table (no scan of earlier runs' rows).
    TRUNCATE report_refresh_hour_first;
END $$;
COMMENT ON FUNCTION report_rebuild_moves(text, timestamptz, timestamptz) IS 'Refresh step: rewrites report_transition_hourly for the hours in [lo, hi) and brings report_device_first_visit up to date for the devices with a visit in them (written only when earlier than the recorded one) or a recorded first visit in them that no visit of these hours starts at any more (recomputed). Internal to waymark_report_refresh().';

-- Incremental path (as 0115): the periods p_starts take the changes of their dirty hours p_hours:
-- each hour's old state (report_refresh_old_hours) counts -1, its new state (report_hour_members)
-- +1, but only for the (hour, region) rows whose device or heard list changed: an unchanged row
-- would only cancel itself out. The (device, region) hour counts that change are grouped per
-- device and merged into the device's row; a device the period did not have yet gets its row with
-- a plain INSERT (no speculative insertion), the others are updated or deleted. The count changes
-- follow from each changed device's lists before and after, as in 0115. Dwell values of changed
-- rows are added to and taken from the value and bin counts, and the (period, region) pairs whose
-- counts changed are noted in report_refresh_dwell_changed for report_refresh_periods.
CREATE OR REPLACE FUNCTION report_apply_period_changes(p_site text, p_period text, p_starts timestamptz[], p_hours timestamptz[]) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
DECLARE
    broken bigint;
BEGIN
    WITH pairs AS MATERIALIZED (
        -- Old and new state of each dirty hour and region of these periods, side by side.
        SELECT coalesce(o.ps, n.ps) AS ps, coalesce(o.region_id, n.region_id) AS region_id,
               o.devices AS old_devices, n.devices AS new_devices, o.heard AS old_heard, n.heard AS new_heard
        FROM (SELECT o.hour, date_trunc(p_period, o.hour, 'UTC') AS ps, o.region_id COLLATE "C" AS region_id, o.devices, o.heard
              FROM report_refresh_old_hours o
              WHERE date_trunc(p_period, o.hour, 'UTC') = ANY (p_starts)) o
        FULL JOIN (
              SELECT n.hour, date_trunc(p_period, n.hour, 'UTC') AS ps, n.region_id COLLATE "C" AS region_id, n.devices, n.heard
              FROM report_hour_members n
              WHERE n.site_id = p_site AND n.hour = ANY (p_hours) AND date_trunc(p_period, n.hour, 'UTC') = ANY (p_starts)) n
          ON n.hour = o.hour AND n.region_id = o.region_id
        WHERE o.devices IS DISTINCT FROM n.devices OR o.heard IS DISTINCT FROM n.heard
    ), steps AS (
        SELECT ps, 'visit' AS kind, x COLLATE "C" AS device_id, region_id, -1 AS sign
        FROM pairs, unnest(old_devices) x WHERE old_devices IS DISTINCT FROM new_devices
        UNION ALL
        SELECT ps, 'visit', x COLLATE "C", region_id, 1 FROM pairs, unnest(new_devices) x WHERE old_devices IS DISTINCT FROM new_devices
        UNION ALL
        SELECT ps, 'heard', x COLLATE "C", region_id, -1 FROM pairs, unnest(old_heard) x WHERE old_heard IS DISTINCT FROM new_heard
        UNION ALL
        SELECT ps, 'heard', x COLLATE "C", region_id, 1 FROM pairs, unnest(new_heard) x WHERE old_heard IS DISTINCT FROM new_heard
    ), deltas AS (
        -- Per device, the regions whose hour count changes and by how much, sorted by region (the
        -- lists of a device new to the period, as they are).
        SELECT ps, device_id,
               array_agg(region_id ORDER BY region_id) FILTER (WHERE kind = 'visit') AS visit_regions,
               array_agg(delta ORDER BY region_id) FILTER (WHERE kind = 'visit') AS visit_deltas,
               array_agg(region_id ORDER BY region_id) FILTER (WHERE kind = 'heard') AS heard_regions,
               array_agg(delta ORDER BY region_id) FILTER (WHERE kind = 'heard') AS heard_deltas
        FROM (SELECT ps, kind, device_id, region_id, sum(sign)::integer AS delta FROM steps
              GROUP BY 1, 2, 3, 4 HAVING sum(sign) <> 0) c
        GROUP BY ps, device_id
    ), probed AS MATERIALIZED (
        -- Each such device's row (one index probe).
        SELECT c.*, d.device_id IS NOT NULL AS existed, d.visit_regions AS had_visit_regions, d.visit_hours AS had_visit_hours,
               d.heard_regions AS had_heard_regions, d.heard_hours AS had_heard_hours
        FROM deltas c
        LEFT JOIN report_period_devices d
               ON d.site_id = p_site AND d.period = p_period AND d.period_start = c.ps AND d.device_id = c.device_id
    ), changed AS MATERIALIZED (
        -- Each such device's lists before and after. A device new to the period takes the changes
        -- as its lists (a negative count there means the state is broken). For one with a row, the
        -- regions whose hour counts change (visit_changed, heard_changed) are merged into its lists;
        -- its heard lists stay as they are when only visits changed (most devices).
        SELECT ps, device_id, false AS existed, '{}'::text[] COLLATE "C" AS visit_before, '{}'::text[] COLLATE "C" AS heard_before,
               coalesce(visit_regions, '{}') COLLATE "C" AS visit_after, coalesce(visit_deltas, '{}') AS visit_hours,
               coalesce(heard_regions, '{}') COLLATE "C" AS heard_after, coalesce(heard_deltas, '{}') AS heard_hours,
               coalesce(visit_regions, '{}') COLLATE "C" AS visit_changed, coalesce(heard_regions, '{}') COLLATE "C" AS heard_changed,
               coalesce(0 > ANY (visit_deltas), false) OR coalesce(0 > ANY (heard_deltas), false) AS negative
        FROM probed WHERE NOT existed
        UNION ALL
        SELECT c.ps, c.device_id, true, c.had_visit_regions COLLATE "C", c.had_heard_regions COLLATE "C",
               v.regions COLLATE "C", v.hours,
               CASE WHEN c.heard_regions IS NULL THEN c.had_heard_regions ELSE h.regions END COLLATE "C",
               CASE WHEN c.heard_regions IS NULL THEN c.had_heard_hours ELSE h.hours END,
               coalesce(c.visit_regions, '{}') COLLATE "C", coalesce(c.heard_regions, '{}') COLLATE "C",
               v.negative OR (c.heard_regions IS NOT NULL AND h.negative)
        FROM probed c
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(r ORDER BY r) FILTER (WHERE n > 0), '{}') AS regions,
                   coalesce(array_agg(n ORDER BY r) FILTER (WHERE n > 0), '{}') AS hours, coalesce(bool_or(n < 0), false) AS negative
            FROM (SELECT r COLLATE "C" AS r, sum(n)::integer AS n
                  FROM (SELECT * FROM unnest(c.had_visit_regions, c.had_visit_hours) AS a(r, n)
                        UNION ALL
                        SELECT * FROM unnest(coalesce(c.visit_regions, '{}'), coalesce(c.visit_deltas, '{}'))) x
                  GROUP BY 1) y
        ) v
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(r ORDER BY r) FILTER (WHERE n > 0), '{}') AS regions,
                   coalesce(array_agg(n ORDER BY r) FILTER (WHERE n > 0), '{}') AS hours, coalesce(bool_or(n < 0), false) AS negative
            FROM (SELECT r COLLATE "C" AS r, sum(n)::integer AS n
                  FROM (SELECT * FROM unnest(c.had_heard_regions, c.had_heard_hours) AS a(r, n)
                        UNION ALL
                        SELECT * FROM unnest(coalesce(c.heard_regions, '{}'), coalesce(c.heard_deltas, '{}'))) x
                  WHERE c.heard_regions IS NOT NULL
                  GROUP BY 1) y
        ) h
        WHERE c.existed
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
    ), joined_period AS (
        -- New to the period: no row to conflict with (the refresh holds its lock; nothing else
        -- writes this table).
        INSERT INTO report_period_devices (site_id, period, period_start, device_id, visit_regions, visit_hours, heard_regions, heard_hours)
        SELECT p_site, p_period, ps, device_id, visit_after, visit_hours, heard_after, heard_hours
        FROM changed WHERE NOT existed AND NOT negative
    ), stayed AS (
        INSERT INTO report_period_devices AS d (site_id, period, period_start, device_id, visit_regions, visit_hours, heard_regions, heard_hours)
        SELECT p_site, p_period, ps, device_id, visit_after, visit_hours, heard_after, heard_hours
        FROM changed WHERE existed AND (cardinality(visit_after) > 0 OR cardinality(heard_after) > 0)
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
        -- Dwell values of the (hour, region) rows whose list of values changed (sorted since this
        -- migration; a row written before compares unequal and is taken out and in: no change).
        SELECT date_trunc(p_period, coalesce(o.hour, n.hour), 'UTC') AS ps, coalesce(o.region_id, n.region_id) AS region_id,
               o.dwells AS old_dwells, n.dwells AS new_dwells
        FROM (SELECT o.hour, o.region_id COLLATE "C" AS region_id, o.dwells FROM report_refresh_old_hours o
              WHERE date_trunc(p_period, o.hour, 'UTC') = ANY (p_starts)) o
        FULL JOIN (
              SELECT n.hour, n.region_id COLLATE "C" AS region_id, n.dwells FROM report_hour_members n
              WHERE n.site_id = p_site AND n.hour = ANY (p_hours) AND date_trunc(p_period, n.hour, 'UTC') = ANY (p_starts)) n
          ON n.hour = o.hour AND n.region_id = o.region_id
        WHERE o.dwells IS DISTINCT FROM n.dwells
    ), values_in_out AS (
        SELECT ps, region_id, x AS dwell_s, -1 AS sign FROM hour_rows, unnest(old_dwells) x
        UNION ALL
        SELECT ps, region_id, x, 1 FROM hour_rows, unnest(new_dwells) x
    ), changes AS MATERIALIZED (
        SELECT c.ps, c.region_id, c.bin, c.dwell_s, c.delta, coalesce(d.n, 0) + c.delta AS n
        FROM (SELECT ps, region_id, report_dwell_bin(dwell_s) AS bin, dwell_s, sum(sign) AS delta
              FROM values_in_out GROUP BY 1, 2, 4 HAVING sum(sign) <> 0
              ORDER BY 1, 2, 3, 4) c  -- probes in key order
        LEFT JOIN report_period_dwell d
               ON d.site_id = p_site AND d.period = p_period AND d.period_start = c.ps
              AND d.region_id = c.region_id AND d.bin = c.bin AND d.dwell_s = c.dwell_s
    ), bin_changes AS MATERIALIZED (
        SELECT c.ps, c.region_id, c.bin, coalesce(b.n, 0) + c.delta AS n
        FROM (SELECT ps, region_id, bin, sum(delta) AS delta FROM changes GROUP BY 1, 2, 3 HAVING sum(delta) <> 0
              ORDER BY 1, 2, 3) c
        LEFT JOIN report_period_dwell_bins b
               ON b.site_id = p_site AND b.period = p_period AND b.period_start = c.ps
              AND b.region_id = c.region_id AND b.bin = c.bin
    ), noted AS (
        INSERT INTO report_refresh_dwell_changed (period, period_start, region_id)
        SELECT DISTINCT p_period, ps, region_id FROM changes
        ON CONFLICT DO NOTHING
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
COMMENT ON FUNCTION report_apply_period_changes(text, text, timestamptz[], timestamptz[]) IS 'Refresh step, incremental path: applies to the days or weeks p_starts the difference between the old state of their dirty hours p_hours (report_refresh_old_hours) and the new one (report_hour_members), for the (hour, region) rows that changed: one row of report_period_devices per device whose hour counts change (inserted when new to the period), the counts and capture visitors that follow from it, and dwell value counts; notes the regions whose dwell values changed in report_refresh_dwell_changed. Internal to waymark_report_refresh().';

-- Exact dwell percentiles (p50, p90) of the regions and days / weeks in [p_lo, p_hi) — of all of
-- them, or (p_changed_only) of those noted in report_refresh_dwell_changed — from
-- report_period_dwell(_bins), as 0112's version computed them: what percentile_cont(f) WITHIN
-- GROUP (ORDER BY dwell_s) over the period's observed visits returns (with N values, the values of
-- 0-based ranks floor(f * (N - 1)) and ceil(f * (N - 1)), linearly interpolated). The running sums
-- over the bins are float8 (exact for counts below 2^53; 0112 summed numeric), and the bins
-- holding the four ranks are picked in the same pass.
CREATE FUNCTION report_dwell_percentiles(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz, p_changed_only boolean)
RETURNS TABLE (period_start timestamptz, region_id text, p50 double precision, p90 double precision)
LANGUAGE sql STABLE SET TimeZone = 'UTC' AS $$
    WITH bins AS (
        SELECT b.period_start, b.region_id COLLATE "C" AS region_id, b.bin, b.n::float8 AS n,
               sum(b.n::float8) OVER (PARTITION BY b.period_start, b.region_id ORDER BY b.bin ROWS UNBOUNDED PRECEDING) AS upto,
               sum(b.n::float8) OVER (PARTITION BY b.period_start, b.region_id) AS total
        FROM report_period_dwell_bins b
        WHERE b.site_id = p_site AND b.period = p_period AND b.period_start >= p_lo AND b.period_start < p_hi
          AND (NOT p_changed_only OR EXISTS (
                SELECT 1 FROM report_refresh_dwell_changed c
                WHERE c.period = p_period AND c.period_start = b.period_start AND c.region_id = b.region_id))
    ), ranked AS (
        SELECT period_start, region_id, bin, n, upto, total,
               floor(0.5::float8 * (total - 1)) AS r50lo, ceil(0.5::float8 * (total - 1)) AS r50hi,
               floor(0.9::float8 * (total - 1)) AS r90lo, ceil(0.9::float8 * (total - 1)) AS r90hi
        FROM bins
    ), located AS (
        -- The bin holding each of the four ranks (two per percentile), and the rank's offset among
        -- that bin's values.
        SELECT b.period_start, b.region_id, b.total, b.bin, r.f, r.lower, r.rank, r.rank - (b.upto - b.n) AS offset_in_bin
        FROM ranked b
        CROSS JOIN LATERAL (VALUES (0.5::float8, true, b.r50lo), (0.5::float8, false, b.r50hi),
                                   (0.9::float8, true, b.r90lo), (0.9::float8, false, b.r90hi)) AS r(f, lower, rank)
        WHERE ((b.upto - b.n <= b.r50lo AND b.r50lo < b.upto) OR (b.upto - b.n <= b.r50hi AND b.r50hi < b.upto)
               OR (b.upto - b.n <= b.r90lo AND b.r90lo < b.upto) OR (b.upto - b.n <= b.r90hi AND b.r90hi < b.upto))
          AND b.upto - b.n <= r.rank AND r.rank < b.upto
    ), valued AS (
        SELECT l.period_start, l.region_id, l.total, l.f, l.lower, l.rank, v.dwell_s
        FROM located l
        CROSS JOIN LATERAL (
            SELECT x.dwell_s
            FROM (SELECT d.dwell_s, sum(d.n::float8) OVER (ORDER BY d.dwell_s) AS upto
                  FROM report_period_dwell d
                  WHERE d.site_id = p_site AND d.period = p_period AND d.period_start = l.period_start
                    AND d.region_id = l.region_id AND d.bin = l.bin) x
            WHERE x.upto > l.offset_in_bin
            ORDER BY x.dwell_s LIMIT 1
        ) v
    ), ends AS (
        SELECT period_start, region_id, f, total,
               max(rank) FILTER (WHERE lower) AS lo_rank, max(dwell_s) FILTER (WHERE lower) AS lo,
               max(rank) FILTER (WHERE NOT lower) AS hi_rank, max(dwell_s) FILTER (WHERE NOT lower) AS hi
        FROM valued GROUP BY 1, 2, 3, 4
    ), percentiles AS (
        -- percentile_cont: lo + (f * (N - 1) - floor(f * (N - 1))) * (hi - lo), or lo when the ranks meet.
        SELECT period_start, region_id, f,
               CASE WHEN lo_rank = hi_rank THEN lo
                    ELSE lo + ((f * (total - 1) - lo_rank) * (hi - lo)) END AS value
        FROM ends
    )
    SELECT period_start, region_id, max(value) FILTER (WHERE f = 0.5), max(value) FILTER (WHERE f = 0.9)
    FROM percentiles GROUP BY period_start, region_id;
$$;
COMMENT ON FUNCTION report_dwell_percentiles(text, text, timestamptz, timestamptz, boolean) IS 'Exact dwell p50 and p90 (percentile_cont semantics) per region and day or week in [lo, hi) — all, or only those noted in report_refresh_dwell_changed — from report_period_dwell and report_period_dwell_bins, without sorting visits. Internal to waymark_report_refresh().';

-- Full path (as 0112), with the percentiles of 0116.
CREATE OR REPLACE FUNCTION report_rebuild_periods(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_region_rollup
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    DELETE FROM report_site_rollup
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;

    INSERT INTO report_site_rollup (site_id, period, period_start, visits, devices)
    SELECT p_site, p_period, s.ps, s.visits, coalesce(c.devices, 0)
    FROM (SELECT date_trunc(p_period, h.period_start, 'UTC') AS ps, sum(h.visits) AS visits
          FROM report_site_rollup h
          WHERE h.site_id = p_site AND h.period = 'hour' AND h.period_start >= p_lo AND h.period_start < p_hi
          GROUP BY 1) s
    LEFT JOIN report_period_counts c
           ON c.site_id = p_site AND c.period = p_period AND c.period_start = s.ps AND c.scope = 'site' AND c.region_id = '';

    INSERT INTO report_region_rollup (site_id, period, period_start, region_id, visits, inferred_visits, devices,
        dwell_visits, dwell_total_s, dwell_p50_s, dwell_p90_s,
        dwell_under_5m, dwell_5_20m, dwell_20_60m, dwell_1_6h, dwell_6h_plus, presence_s, peak_devices)
    SELECT p_site, p_period, h.ps, h.region_id, h.visits, h.inferred_visits, coalesce(c.devices, 0),
           h.dwell_visits, h.dwell_total_s, x.p50, x.p90, h.b0, h.b1, h.b2, h.b3, h.b4, h.presence_s, h.peak
    FROM (
        SELECT date_trunc(p_period, h.period_start, 'UTC') AS ps, h.region_id COLLATE "C" AS region_id,
               sum(h.visits) AS visits, sum(h.inferred_visits) AS inferred_visits, sum(h.dwell_visits) AS dwell_visits,
               sum(h.dwell_total_s) AS dwell_total_s, sum(h.dwell_under_5m) AS b0, sum(h.dwell_5_20m) AS b1,
               sum(h.dwell_20_60m) AS b2, sum(h.dwell_1_6h) AS b3, sum(h.dwell_6h_plus) AS b4,
               sum(h.presence_s) AS presence_s, max(h.peak_devices) AS peak
        FROM report_region_rollup h
        WHERE h.site_id = p_site AND h.period = 'hour' AND h.period_start >= p_lo AND h.period_start < p_hi
        GROUP BY 1, 2
    ) h
    LEFT JOIN report_period_counts c
           ON c.site_id = p_site AND c.period = p_period AND c.period_start = h.ps AND c.scope = 'region' AND c.region_id = h.region_id
    LEFT JOIN report_dwell_percentiles(p_site, p_period, p_lo, p_hi, false) x ON x.period_start = h.ps AND x.region_id = h.region_id;
END $$;
COMMENT ON FUNCTION report_rebuild_periods(text, text, timestamptz, timestamptz) IS 'Refresh step, full path: rewrites the day or week rows of report_region_rollup and report_site_rollup in [lo, hi) from the hour rows, report_period_counts and report_dwell_percentiles. Internal to waymark_report_refresh().';

DROP FUNCTION report_dwell_percentiles(text, text, timestamptz, timestamptz);  -- replaced by the five-argument version

-- Incremental path: the day or week rows of the periods p_starts (which took their dirty hours'
-- changes), as report_rebuild_periods makes them, except that the exact percentiles are computed
-- only for the regions noted in report_refresh_dwell_changed: the others' dwell values are the same
-- as at the last refresh, and so are their percentiles, which are kept. Cost: the periods' hour rows
-- (a few thousand small rows for a week) and the changed regions' bins.
CREATE FUNCTION report_refresh_periods(p_site text, p_period text, p_starts timestamptz[]) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
DECLARE
    lo timestamptz := (SELECT min(s) FROM unnest(p_starts) s);
    hi timestamptz := (SELECT max(s) FROM unnest(p_starts) s) + ('1 ' || p_period)::interval;
BEGIN
    DELETE FROM report_site_rollup
    WHERE site_id = p_site AND period = p_period AND period_start = ANY (p_starts);
    INSERT INTO report_site_rollup (site_id, period, period_start, visits, devices)
    SELECT p_site, p_period, s.ps, s.visits, coalesce(c.devices, 0)
    FROM (SELECT date_trunc(p_period, h.period_start, 'UTC') AS ps, sum(h.visits) AS visits
          FROM report_site_rollup h
          WHERE h.site_id = p_site AND h.period = 'hour' AND h.period_start >= lo AND h.period_start < hi
            AND date_trunc(p_period, h.period_start, 'UTC') = ANY (p_starts)
          GROUP BY 1) s
    LEFT JOIN report_period_counts c
           ON c.site_id = p_site AND c.period = p_period AND c.period_start = s.ps AND c.scope = 'site' AND c.region_id = '';

    -- Region rows: rewritten in place (the percentiles of unchanged regions are read from them
    -- first, in the same statement); rows of regions left without hour rows go below.
    INSERT INTO report_region_rollup AS r (site_id, period, period_start, region_id, visits, inferred_visits, devices,
        dwell_visits, dwell_total_s, dwell_p50_s, dwell_p90_s,
        dwell_under_5m, dwell_5_20m, dwell_20_60m, dwell_1_6h, dwell_6h_plus, presence_s, peak_devices)
    SELECT p_site, p_period, h.ps, h.region_id, h.visits, h.inferred_visits, coalesce(c.devices, 0),
           h.dwell_visits, h.dwell_total_s,
           CASE WHEN n.region_id IS NULL THEN o.dwell_p50_s ELSE x.p50 END,
           CASE WHEN n.region_id IS NULL THEN o.dwell_p90_s ELSE x.p90 END,
           h.b0, h.b1, h.b2, h.b3, h.b4, h.presence_s, h.peak
    FROM (
        SELECT date_trunc(p_period, h.period_start, 'UTC') AS ps, h.region_id COLLATE "C" AS region_id,
               sum(h.visits) AS visits, sum(h.inferred_visits) AS inferred_visits, sum(h.dwell_visits) AS dwell_visits,
               sum(h.dwell_total_s) AS dwell_total_s, sum(h.dwell_under_5m) AS b0, sum(h.dwell_5_20m) AS b1,
               sum(h.dwell_20_60m) AS b2, sum(h.dwell_1_6h) AS b3, sum(h.dwell_6h_plus) AS b4,
               sum(h.presence_s) AS presence_s, max(h.peak_devices) AS peak
        FROM report_region_rollup h
        WHERE h.site_id = p_site AND h.period = 'hour' AND h.period_start >= lo AND h.period_start < hi
          AND date_trunc(p_period, h.period_start, 'UTC') = ANY (p_starts)
        GROUP BY 1, 2
    ) h
    LEFT JOIN report_period_counts c
           ON c.site_id = p_site AND c.period = p_period AND c.period_start = h.ps AND c.scope = 'region' AND c.region_id = h.region_id
    LEFT JOIN report_region_rollup o
           ON o.site_id = p_site AND o.period = p_period AND o.period_start = h.ps AND o.region_id = h.region_id
    LEFT JOIN report_refresh_dwell_changed n
           ON n.period = p_period AND n.period_start = h.ps AND n.region_id = h.region_id
    LEFT JOIN report_dwell_percentiles(p_site, p_period, lo, hi, true) x ON x.period_start = h.ps AND x.region_id = h.region_id
    ON CONFLICT (site_id, period, period_start, region_id) DO UPDATE
    SET visits = excluded.visits, inferred_visits = excluded.inferred_visits, devices = excluded.devices,
        dwell_visits = excluded.dwell_visits, dwell_total_s = excluded.dwell_total_s,
        dwell_p50_s = excluded.dwell_p50_s, dwell_p90_s = excluded.dwell_p90_s,
        dwell_under_5m = excluded.dwell_under_5m, dwell_5_20m = excluded.dwell_5_20m, dwell_20_60m = excluded.dwell_20_60m,
        dwell_1_6h = excluded.dwell_1_6h, dwell_6h_plus = excluded.dwell_6h_plus,
        presence_s = excluded.presence_s, peak_devices = excluded.peak_devices;
    DELETE FROM report_region_rollup r
    WHERE r.site_id = p_site AND r.period = p_period AND r.period_start = ANY (p_starts)
      AND (r.period_start, r.region_id COLLATE "C") NOT IN (
            SELECT DISTINCT date_trunc(p_period, h.period_start, 'UTC'), h.region_id COLLATE "C"
            FROM report_region_rollup h
            WHERE h.site_id = p_site AND h.period = 'hour' AND h.period_start >= lo AND h.period_start < hi);
END $$;
COMMENT ON FUNCTION report_refresh_periods(text, text, timestamptz[]) IS 'Refresh step, incremental path: rewrites the day or week rows of report_region_rollup and report_site_rollup of the given periods from the hour rows and report_period_counts; exact dwell percentiles are recomputed for the regions noted in report_refresh_dwell_changed and kept for the others. Internal to waymark_report_refresh().';

-- As in 0115, with the steps above: per run of dirty hours report_rebuild_hours (hour rows, hour
-- state, hourly capture), report_rebuild_moves and report_rebuild_path_hours; days and weeks with
-- half or more of their hours dirty are rebuilt whole (report_rebuild_period_members,
-- report_rebuild_periods), the others take their hours' changes (report_apply_period_changes,
-- report_refresh_periods).
CREATE OR REPLACE FUNCTION waymark_report_refresh(p_site text DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET TimeZone = 'UTC'
    SET work_mem = '256MB' SET plan_cache_mode = 'force_custom_plan' SET jit = off AS $$
DECLARE
    s text;
    hours timestamptz[];
    r record;
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
        TRUNCATE report_refresh_old_hours, report_refresh_old_paths, report_refresh_dwell_changed, report_refresh_hour_first;
        WITH old AS (
            DELETE FROM report_hour_members WHERE site_id = s AND hour = ANY (hours)
            RETURNING hour, region_id, devices, dwells, heard
        )
        INSERT INTO report_refresh_old_hours SELECT * FROM old;

        -- A long run (a bulk load, a first refresh) goes a day at a time: the one read of its visits
        -- then fits in memory (a month's in one statement spilled and sorted gigabytes), and a day's
        -- edge is handled like any run's (the visits present at its start are carried in).
        FOR r IN SELECT greatest(x, runs.lo) AS lo, least(x + interval '1 day', runs.hi) AS hi
                 FROM report_runs(hours, interval '1 hour') runs,
                      generate_series(date_trunc('day', runs.lo, 'UTC'), runs.hi - interval '1 hour', interval '1 day') x LOOP
            PERFORM report_rebuild_hours(s, r.lo, r.hi);
            PERFORM report_rebuild_moves(s, r.lo, r.hi);
            PERFORM report_rebuild_path_hours(s, r.lo, r.hi, changed_days);
        END LOOP;

        FOR r IN SELECT * FROM report_runs(whole_days, interval '1 day') LOOP
            PERFORM report_rebuild_period_members(s, 'day', r.lo, r.hi);
            PERFORM report_rebuild_path_days(s, r.lo, r.hi);
            PERFORM report_rebuild_periods(s, 'day', r.lo, r.hi);
            PERFORM report_rebuild_capture_periods(s, 'day', r.lo, r.hi);
        END LOOP;
        IF changed_days IS NOT NULL THEN
            PERFORM report_apply_period_changes(s, 'day', changed_days, hours);
            PERFORM report_apply_path_changes(s, changed_days, hours);
            PERFORM report_refresh_periods(s, 'day', changed_days);
            FOR r IN SELECT * FROM report_runs(changed_days, interval '1 day') LOOP
                PERFORM report_rebuild_capture_periods(s, 'day', r.lo, r.hi);
            END LOOP;
        END IF;
        FOR r IN SELECT * FROM report_runs(whole_weeks, interval '1 week') LOOP
            PERFORM report_rebuild_period_members(s, 'week', r.lo, r.hi);
            PERFORM report_rebuild_periods(s, 'week', r.lo, r.hi);
            PERFORM report_rebuild_capture_periods(s, 'week', r.lo, r.hi);
            rebuilt_whole := true;
        END LOOP;
        IF changed_weeks IS NOT NULL THEN
            PERFORM report_apply_period_changes(s, 'week', changed_weeks, hours);
            PERFORM report_refresh_periods(s, 'week', changed_weeks);
            FOR r IN SELECT * FROM report_runs(changed_weeks, interval '1 week') LOOP
                PERFORM report_rebuild_capture_periods(s, 'week', r.lo, r.hi);
            END LOOP;
        END IF;
        TRUNCATE report_refresh_old_hours, report_refresh_old_paths, report_refresh_dwell_changed, report_refresh_hour_first;
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
COMMENT ON FUNCTION waymark_report_refresh(text) IS 'Brings the report rollups up to date for the hours changed since the last call (one site, or all when NULL); returns how many hours it rebuilt. Cost follows the changed hours: each is read once (schema 0116), and day and week figures are updated from those hours'' changes (schema 0112), touching one row per device whose day or week membership changed (schema 0115) and recomputing the exact percentiles of the regions whose dwell values changed (schema 0116). Hours before the retention horizon (history_horizon) are left as they are: their history was dropped (schema 0114). Safe to call at any time and concurrently; runs with the rights of the schema owner so the read-only report role may call it.';
