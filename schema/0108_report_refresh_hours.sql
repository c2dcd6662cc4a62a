-- Waymark reports, part 9: a set-based refresh, hour rows. Replaces the per-period helpers of
-- 0102/0103 (dropped in 0109). The dirty hours are split into runs of consecutive hours, and each
-- statement rebuilds a whole run at once from a range scan of the raw rows, so a full rebuild of
-- months of data is a handful of scans and sorts (linear in the data) and refreshing one new hour
-- reads only that hour's rows. Day and week rows are derived in 0109.

-- Runs of consecutive periods: each element of p_starts is the start of a period of length p_step;
-- returns one [lo, hi) per maximal run of adjacent periods, in time order.
CREATE FUNCTION report_runs(p_starts timestamptz[], p_step interval)
RETURNS TABLE (lo timestamptz, hi timestamptz) LANGUAGE sql STABLE SET TimeZone = 'UTC' AS $$
    WITH s AS (
        SELECT DISTINCT x FROM unnest(p_starts) x
    ), numbered AS (
        SELECT x, row_number() OVER (ORDER BY x) AS n FROM s
    )
    SELECT min(x), max(x) + p_step FROM numbered GROUP BY x - n * p_step ORDER BY 1;
$$;

-- Hour rows of report_region_rollup and report_site_rollup for every hour in [p_lo, p_hi): visits
-- entering in the hour (count, distinct devices, dwell figures) and presence (device-seconds and
-- peak devices present). A device is present from entered_at (inclusive) to exited_at (exclusive);
-- the peak sweeps the enter (+1) and leave (-1) moments of each region over the whole run in time
-- order, leaves before enters at the same instant.
CREATE FUNCTION report_rebuild_hours(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_region_rollup
    WHERE site_id = p_site AND period = 'hour' AND period_start >= p_lo AND period_start < p_hi;
    DELETE FROM report_site_rollup
    WHERE site_id = p_site AND period = 'hour' AND period_start >= p_lo AND period_start < p_hi;

    -- One sort serves both the region rows and the site rows (region_id NULL in the second set).
    WITH entered AS (
        SELECT date_trunc('hour', v.entered_at, 'UTC') AS ps, v.region_id COLLATE "C" AS region_id,
               count(*) AS visits, count(*) FILTER (WHERE v.inferred) AS inferred_visits,
               count(DISTINCT v.device_id COLLATE "C") AS devices,
               count(*) FILTER (WHERE NOT v.inferred) AS dwell_visits,
               coalesce(sum(v.dwell_s) FILTER (WHERE NOT v.inferred), 0) AS dwell_total_s,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY v.dwell_s) FILTER (WHERE NOT v.inferred) AS p50,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY v.dwell_s) FILTER (WHERE NOT v.inferred) AS p90,
               count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s < 300) AS b0,
               count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 300 AND v.dwell_s < 1200) AS b1,
               count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 1200 AND v.dwell_s < 3600) AS b2,
               count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 3600 AND v.dwell_s < 21600) AS b3,
               count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 21600) AS b4
        FROM visits v
        WHERE v.site_id = p_site AND v.entered_at >= p_lo AND v.entered_at < p_hi
        GROUP BY GROUPING SETS ((1, 2), (1))
    ), site_rows AS (
        INSERT INTO report_site_rollup (site_id, period, period_start, visits, devices)
        SELECT p_site, 'hour', ps, visits, devices FROM entered WHERE region_id IS NULL
    ), stays AS MATERIALIZED (
        -- Each visit's presence, clipped to the run.
        SELECT v.region_id COLLATE "C" AS region_id, greatest(v.entered_at, p_lo) AS s, least(v.exited_at, p_hi) AS e
        FROM visits v
        WHERE v.site_id = p_site AND v.exited_at > p_lo AND v.entered_at < p_hi AND v.exited_at > v.entered_at
    ), spans AS (
        -- The stays cut at hour boundaries (most lie within one hour and need no cutting).
        SELECT region_id, date_trunc('hour', s, 'UTC') AS hour, s, e, false AS carried FROM stays
        WHERE date_trunc('hour', s, 'UTC') = date_trunc('hour', e - interval '1 microsecond', 'UTC')
        UNION ALL
        SELECT region_id, h.hour, greatest(s, h.hour), least(e, h.hour + interval '1 hour'), s < h.hour
        FROM stays
        CROSS JOIN LATERAL generate_series(date_trunc('hour', s, 'UTC'), e - interval '1 microsecond', interval '1 hour') AS h(hour)
        WHERE date_trunc('hour', s, 'UTC') <> date_trunc('hour', e - interval '1 microsecond', 'UTC')
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
        SELECT region_id, date_trunc('hour', t, 'UTC') AS ps, max(level) AS peak FROM levels WHERE delta = 1 GROUP BY 1, 2
    )
    INSERT INTO report_region_rollup (site_id, period, period_start, region_id, visits, inferred_visits, devices,
        dwell_visits, dwell_total_s, dwell_p50_s, dwell_p90_s,
        dwell_under_5m, dwell_5_20m, dwell_20_60m, dwell_1_6h, dwell_6h_plus, presence_s, peak_devices)
    SELECT p_site, 'hour', ps, region_id, coalesce(en.visits, 0), coalesce(en.inferred_visits, 0),
           coalesce(en.devices, 0), coalesce(en.dwell_visits, 0), coalesce(en.dwell_total_s, 0), en.p50, en.p90,
           coalesce(en.b0, 0), coalesce(en.b1, 0), coalesce(en.b2, 0), coalesce(en.b3, 0), coalesce(en.b4, 0),
           coalesce(pr.presence_s, 0), greatest(pr.carried, pk.peak, 0)
    FROM (SELECT * FROM entered WHERE region_id IS NOT NULL) en
    FULL JOIN presence pr USING (ps, region_id)
    LEFT JOIN peaks pk USING (ps, region_id);
END $$;
