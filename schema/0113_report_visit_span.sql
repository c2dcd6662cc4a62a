-- Waymark reports, part 14: the occupancy part of an hour's refresh reads only the visits that can
-- overlap the hour.
--
-- report_rebuild_hours (0108) found the visits present during the rebuilt hours with
-- "exited_at > lo AND entered_at < hi": for an hour in the middle of the history, each of those two
-- conditions alone matches half the visits table, so refreshing one old hour read millions of
-- index entries. A visit that overlaps [lo, hi) entered at most its own length before lo, so with
-- the longest visit of the site known, the scan becomes the index range
-- entered_at ∈ [lo − longest, hi). report_visit_span keeps that length per site: the visits
-- triggers raise it when a longer visit is written (checked before writing, so ingest rarely
-- touches the row); it never shrinks, which keeps it a safe bound after deletions. A site whose
-- visits can last days reads days of visits per refreshed hour.

CREATE TABLE report_visit_span (
    site_id  text PRIMARY KEY,
    longest  interval NOT NULL
);
COMMENT ON TABLE report_visit_span IS 'Per site, an upper bound of exited_at - entered_at over its visits (the longest ever written; never lowered): how far before an hour a visit present in it can have entered. Kept by the visits triggers; read by the occupancy refresh.';

INSERT INTO report_visit_span (site_id, longest)
SELECT site_id, greatest(max(exited_at - entered_at), interval '0') FROM visits GROUP BY site_id;

-- Marks the hours a visit overlaps (as in 0100) and raises the site's longest visit when needed.
CREATE OR REPLACE FUNCTION report_mark_visits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s text;
    span interval;
BEGIN
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT DISTINCT c.site_id, h
    FROM changed_rows c,
         generate_series(date_trunc('hour', c.entered_at, 'UTC'),
                         date_trunc('hour', greatest(c.exited_at, c.entered_at), 'UTC'), interval '1 hour') AS h
    ON CONFLICT DO NOTHING;
    FOR s, span IN SELECT c.site_id, max(c.exited_at - c.entered_at) FROM changed_rows c GROUP BY c.site_id LOOP
        IF span > coalesce((SELECT v.longest FROM report_visit_span v WHERE v.site_id = s), interval '-1 second') THEN
            INSERT INTO report_visit_span AS v (site_id, longest) VALUES (s, span)
            ON CONFLICT (site_id) DO UPDATE SET longest = greatest(v.longest, excluded.longest);
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION report_mark_visits() IS 'Statement trigger of visits: marks the UTC hours the changed visits overlap in report_dirty_hours, and raises report_visit_span when a visit is longer than any before.';

-- Hour rows of report_region_rollup and report_site_rollup for every hour in [p_lo, p_hi), as in
-- 0108, with the presence scan bounded by report_visit_span.
CREATE OR REPLACE FUNCTION report_rebuild_hours(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
DECLARE
    -- No visit entering before this can overlap the run (see report_visit_span).
    earliest timestamptz := p_lo - coalesce((SELECT s.longest FROM report_visit_span s WHERE s.site_id = p_site), interval '0');
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
        WHERE v.site_id = p_site AND v.entered_at >= earliest AND v.entered_at < p_hi
          AND v.exited_at > p_lo AND v.exited_at > v.entered_at
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
COMMENT ON FUNCTION report_rebuild_hours(text, timestamptz, timestamptz) IS 'Refresh step: rewrites the hour rows of report_region_rollup and report_site_rollup in [lo, hi) from visits (entered in the hour; present during it, found through report_visit_span). Internal to waymark_report_refresh().';
