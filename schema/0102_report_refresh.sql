-- Waymark reports, part 3: the incremental refresh of the rollups.
-- waymark_report_refresh() takes the hours the triggers marked (report_dirty_hours), and rebuilds
-- the rollup rows of those hours, of the days and ISO weeks that contain them, and of the days of
-- the journeys that started in them. The aggregator may call it after its commits; `waymark report`
-- calls it before reading; an analyst runs `SELECT waymark_report_refresh();` before querying by
-- hand. Concurrent calls queue on an advisory lock. Cost grows with the data of the touched
-- periods (a touched week is rebuilt whole), not with the history.

-- Visit, device and dwell figures of one period kind for the given period starts (entered_at).
CREATE FUNCTION report_refresh_entered(p_site text, p_period text, p_starts timestamptz[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM report_region_rollup
    WHERE site_id = p_site AND period = p_period AND period_start = ANY (p_starts);
    DELETE FROM report_site_rollup
    WHERE site_id = p_site AND period = p_period AND period_start = ANY (p_starts);

    INSERT INTO report_region_rollup (site_id, period, period_start, region_id, visits, inferred_visits, devices,
        dwell_visits, dwell_total_s, dwell_p50_s, dwell_p90_s,
        dwell_under_5m, dwell_5_20m, dwell_20_60m, dwell_1_6h, dwell_6h_plus)
    SELECT p_site, p_period, date_trunc(p_period, v.entered_at, 'UTC') AS ps, v.region_id,
           count(*), count(*) FILTER (WHERE v.inferred), count(DISTINCT v.device_id),
           count(*) FILTER (WHERE NOT v.inferred),
           coalesce(sum(v.dwell_s) FILTER (WHERE NOT v.inferred), 0),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY v.dwell_s) FILTER (WHERE NOT v.inferred),
           percentile_cont(0.9) WITHIN GROUP (ORDER BY v.dwell_s) FILTER (WHERE NOT v.inferred),
           count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s < 300),
           count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 300 AND v.dwell_s < 1200),
           count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 1200 AND v.dwell_s < 3600),
           count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 3600 AND v.dwell_s < 21600),
           count(*) FILTER (WHERE NOT v.inferred AND v.dwell_s >= 21600)
    FROM visits v
    WHERE v.site_id = p_site
      AND v.entered_at >= (SELECT min(s) FROM unnest(p_starts) s)
      AND v.entered_at < (SELECT max(s) FROM unnest(p_starts) s) + ('1 ' || p_period)::interval
      AND date_trunc(p_period, v.entered_at, 'UTC') IN (SELECT unnest(p_starts))
    GROUP BY ps, v.region_id;

    INSERT INTO report_site_rollup (site_id, period, period_start, visits, devices)
    SELECT p_site, p_period, date_trunc(p_period, v.entered_at, 'UTC') AS ps, count(*), count(DISTINCT v.device_id)
    FROM visits v
    WHERE v.site_id = p_site
      AND v.entered_at >= (SELECT min(s) FROM unnest(p_starts) s)
      AND v.entered_at < (SELECT max(s) FROM unnest(p_starts) s) + ('1 ' || p_period)::interval
      AND date_trunc(p_period, v.entered_at, 'UTC') IN (SELECT unnest(p_starts))
    GROUP BY ps;
$$;

-- Presence (device-seconds) and peak simultaneous devices per region for the given hours. A
-- device is present from entered_at (inclusive) to exited_at (exclusive); the peak sweeps the
-- enter (+1) and leave (-1) moments in time order, leaves before enters at the same instant.
CREATE FUNCTION report_refresh_presence(p_site text, p_hours timestamptz[]) RETURNS void
LANGUAGE sql AS $$
    WITH bounds AS (
        SELECT min(h) AS lo, max(h) + interval '1 hour' AS hi FROM unnest(p_hours) h
    ), spans AS (
        SELECT v.region_id, h.hour,
               greatest(v.entered_at, h.hour) AS s,
               least(v.exited_at, h.hour + interval '1 hour') AS e
        FROM bounds b
        JOIN visits v ON v.site_id = p_site AND v.exited_at > b.lo AND v.entered_at < b.hi
                     AND v.exited_at > v.entered_at
        CROSS JOIN LATERAL generate_series(date_trunc('hour', greatest(v.entered_at, b.lo), 'UTC'),
                                           least(v.exited_at, b.hi) - interval '1 microsecond',
                                           interval '1 hour') AS h(hour)
        WHERE h.hour IN (SELECT unnest(p_hours))
    ), moves AS (
        SELECT region_id, hour, s AS t, 1 AS delta FROM spans
        UNION ALL
        SELECT region_id, hour, e AS t, -1 AS delta FROM spans
    ), levels AS (
        SELECT region_id, hour, delta,
               sum(delta) OVER (PARTITION BY region_id, hour ORDER BY t, delta) AS level
        FROM moves
    ), peaks AS (
        SELECT region_id, hour, max(level) FILTER (WHERE delta = 1) AS peak FROM levels GROUP BY region_id, hour
    ), presence AS (
        SELECT region_id, hour, sum(extract(epoch FROM e - s)) AS presence_s FROM spans GROUP BY region_id, hour
    )
    INSERT INTO report_region_rollup AS r (site_id, period, period_start, region_id, presence_s, peak_devices)
    SELECT p_site, 'hour', p.hour, p.region_id, p.presence_s, coalesce(k.peak, 0)
    FROM presence p JOIN peaks k USING (region_id, hour)
    ON CONFLICT (site_id, period, period_start, region_id)
    DO UPDATE SET presence_s = excluded.presence_s, peak_devices = excluded.peak_devices;
$$;

-- Day and week presence from the hour rows: device-seconds add up, the peak is the largest hourly peak.
CREATE FUNCTION report_refresh_presence_rollup(p_site text, p_period text, p_starts timestamptz[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO report_region_rollup AS r (site_id, period, period_start, region_id, presence_s, peak_devices)
    SELECT p_site, p_period, date_trunc(p_period, h.period_start, 'UTC') AS ps, h.region_id,
           sum(h.presence_s), max(h.peak_devices)
    FROM report_region_rollup h
    WHERE h.site_id = p_site AND h.period = 'hour'
      AND h.period_start >= (SELECT min(s) FROM unnest(p_starts) s)
      AND h.period_start < (SELECT max(s) FROM unnest(p_starts) s) + ('1 ' || p_period)::interval
      AND date_trunc(p_period, h.period_start, 'UTC') IN (SELECT unnest(p_starts))
    GROUP BY ps, h.region_id
    ON CONFLICT (site_id, period, period_start, region_id)
    DO UPDATE SET presence_s = excluded.presence_s, peak_devices = excluded.peak_devices;
$$;
