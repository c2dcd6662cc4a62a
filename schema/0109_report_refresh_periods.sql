-- Waymark reports, part 10: a set-based refresh, day and week rows, transitions, paths, first
-- visits and entrance capture over a run of periods [p_lo, p_hi) (see 0108).

-- Day or week rows of report_region_rollup and report_site_rollup for every period in [p_lo, p_hi)
-- (whole periods). The additive figures (visits, dwell count, sum and buckets, device-seconds) are
-- sums of the period's hour rows and the peak is the largest hourly peak, so the hour rows must be
-- current. Distinct devices and dwell percentiles cannot be derived from hours: they are computed
-- from the period's visits (a device seen in two hours of a day is one device that day).
CREATE FUNCTION report_rebuild_periods(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_region_rollup
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    DELETE FROM report_site_rollup
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;

    WITH hours AS (
        SELECT date_trunc(p_period, h.period_start, 'UTC') AS ps, h.region_id COLLATE "C" AS region_id,
               sum(h.visits) AS visits, sum(h.inferred_visits) AS inferred_visits, sum(h.dwell_visits) AS dwell_visits,
               sum(h.dwell_total_s) AS dwell_total_s, sum(h.dwell_under_5m) AS b0, sum(h.dwell_5_20m) AS b1,
               sum(h.dwell_20_60m) AS b2, sum(h.dwell_1_6h) AS b3, sum(h.dwell_6h_plus) AS b4,
               sum(h.presence_s) AS presence_s, max(h.peak_devices) AS peak
        FROM report_region_rollup h
        WHERE h.site_id = p_site AND h.period = 'hour' AND h.period_start >= p_lo AND h.period_start < p_hi
        GROUP BY 1, 2
    ), exact AS (
        SELECT date_trunc(p_period, v.entered_at, 'UTC') AS ps, v.region_id COLLATE "C" AS region_id,
               count(DISTINCT v.device_id COLLATE "C") AS devices,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY v.dwell_s) FILTER (WHERE NOT v.inferred) AS p50,
               percentile_cont(0.9) WITHIN GROUP (ORDER BY v.dwell_s) FILTER (WHERE NOT v.inferred) AS p90,
               count(*) AS visits
        FROM visits v
        WHERE v.site_id = p_site AND v.entered_at >= p_lo AND v.entered_at < p_hi
        GROUP BY GROUPING SETS ((1, 2), (1))  -- region rows, and site rows (region_id NULL)
    ), site_rows AS (
        INSERT INTO report_site_rollup (site_id, period, period_start, visits, devices)
        SELECT p_site, p_period, ps, visits, devices FROM exact WHERE region_id IS NULL
    )
    INSERT INTO report_region_rollup (site_id, period, period_start, region_id, visits, inferred_visits, devices,
        dwell_visits, dwell_total_s, dwell_p50_s, dwell_p90_s,
        dwell_under_5m, dwell_5_20m, dwell_20_60m, dwell_1_6h, dwell_6h_plus, presence_s, peak_devices)
    SELECT p_site, p_period, ps, region_id, h.visits, h.inferred_visits, coalesce(x.devices, 0),
           h.dwell_visits, h.dwell_total_s, x.p50, x.p90, h.b0, h.b1, h.b2, h.b3, h.b4, h.presence_s, h.peak
    FROM hours h LEFT JOIN (SELECT * FROM exact WHERE region_id IS NOT NULL) x USING (ps, region_id);
END $$;

-- Transitions per hour and region pair, and each device's first visit, for the hours in [p_lo, p_hi).
CREATE FUNCTION report_rebuild_moves(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_transition_hourly WHERE site_id = p_site AND hour >= p_lo AND hour < p_hi;
    INSERT INTO report_transition_hourly (site_id, hour, from_region, to_region, transitions, inferred)
    SELECT p_site, date_trunc('hour', t.at, 'UTC'), t.from_region, t.to_region, count(*), count(*) FILTER (WHERE t.inferred)
    FROM transitions t
    WHERE t.site_id = p_site AND t.at >= p_lo AND t.at < p_hi
    GROUP BY 2, 3, 4;

    INSERT INTO report_device_first_visit AS f (site_id, device_id, first_visit_at)
    SELECT p_site, v.device_id, min(v.entered_at)
    FROM visits v
    WHERE v.site_id = p_site AND v.entered_at >= p_lo AND v.entered_at < p_hi
    GROUP BY v.device_id
    ON CONFLICT (site_id, device_id) DO UPDATE SET first_visit_at = excluded.first_visit_at
        WHERE excluded.first_visit_at < f.first_visit_at;
END $$;

-- Path counts per hour of journeys.started_at, so refreshing an hour re-counts only the journeys
-- that started in it; report_path_daily (what the paths report reads) is their sum per day.
CREATE TABLE report_path_hourly (
    site_id      text NOT NULL,
    hour         timestamptz NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('journey', 'subpath')),
    length       integer NOT NULL,
    path         text NOT NULL,
    occurrences  bigint NOT NULL,
    PRIMARY KEY (site_id, hour, kind, length, path)
);
COMMENT ON TABLE report_path_hourly IS 'Per UTC hour of journeys.started_at: whole journeys and their contiguous sub-paths of 2 to 4 regions, as report_path_daily (which sums these rows per day).';
GRANT SELECT ON report_path_hourly TO waymark_report;

-- Whole journeys and their contiguous sub-paths of 2 to 4 regions, per UTC hour of started_at, for
-- the hours in [p_lo, p_hi).
CREATE FUNCTION report_rebuild_paths(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_path_hourly WHERE site_id = p_site AND hour >= p_lo AND hour < p_hi;
    INSERT INTO report_path_hourly (site_id, hour, kind, length, path, occurrences)
    WITH js AS (
        SELECT date_trunc('hour', j.started_at, 'UTC') AS hour, j.regions, cardinality(j.regions) AS n
        FROM journeys j
        WHERE j.site_id = p_site AND j.started_at >= p_lo AND j.started_at < p_hi AND cardinality(j.regions) > 0
    ), pieces AS (
        SELECT hour, 'journey' AS kind, n AS length, array_to_string(regions, ' > ') AS path FROM js
        UNION ALL
        SELECT js.hour, 'subpath', len, array_to_string(js.regions[i:i + len - 1], ' > ')
        FROM js, generate_series(2, 4) AS len, generate_series(1, js.n - len + 1) AS i
    )
    SELECT p_site, hour, kind, length, path, count(*) FROM pieces GROUP BY hour, kind, length, path;
END $$;

-- report_path_daily for the days in [p_lo, p_hi): sums of the hourly path counts (current).
CREATE FUNCTION report_rebuild_path_days(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_path_daily WHERE site_id = p_site AND day >= p_lo AND day < p_hi;
    INSERT INTO report_path_daily (site_id, day, kind, length, path, occurrences)
    SELECT p_site, date_trunc('day', h.hour, 'UTC'), h.kind, h.length, h.path, sum(h.occurrences)
    FROM report_path_hourly h
    WHERE h.site_id = p_site AND h.hour >= p_lo AND h.hour < p_hi
    GROUP BY 2, 3, 4, 5;
END $$;

-- Entrance capture for the periods in [p_lo, p_hi): devices heard at each entrance in the period,
-- and how many of them have a visit (any region) entering in the same period.
CREATE FUNCTION report_rebuild_capture(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_capture_rollup
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    INSERT INTO report_capture_rollup (site_id, period, period_start, region_id, heard, visitors)
    WITH heard AS (
        SELECT DISTINCT date_trunc(p_period, e.hour, 'UTC') AS ps, e.region_id, e.device_id COLLATE "C" AS device_id
        FROM entrance_heard e
        WHERE e.site_id = p_site AND e.hour >= p_lo AND e.hour < p_hi
    ), inside AS (
        SELECT DISTINCT date_trunc(p_period, v.entered_at, 'UTC') AS ps, v.device_id COLLATE "C" AS device_id
        FROM visits v
        WHERE v.site_id = p_site AND v.entered_at >= p_lo AND v.entered_at < p_hi
    )
    SELECT p_site, p_period, h.ps, h.region_id, count(*), count(i.device_id)
    FROM heard h LEFT JOIN inside i ON i.ps = h.ps AND i.device_id = h.device_id
    GROUP BY h.ps, h.region_id;
END $$;
