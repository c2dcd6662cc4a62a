-- Waymark reports, part 4: refresh of first visits, transitions, paths and entrance capture, and
-- waymark_report_refresh() itself.

CREATE FUNCTION report_refresh_first_visits(p_site text, p_hours timestamptz[]) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO report_device_first_visit AS f (site_id, device_id, first_visit_at)
    SELECT p_site, v.device_id, min(v.entered_at)
    FROM visits v
    WHERE v.site_id = p_site
      AND v.entered_at >= (SELECT min(h) FROM unnest(p_hours) h)
      AND v.entered_at < (SELECT max(h) FROM unnest(p_hours) h) + interval '1 hour'
      AND date_trunc('hour', v.entered_at, 'UTC') IN (SELECT unnest(p_hours))
    GROUP BY v.device_id
    ON CONFLICT (site_id, device_id) DO UPDATE SET first_visit_at = least(f.first_visit_at, excluded.first_visit_at);
$$;

CREATE FUNCTION report_refresh_transitions(p_site text, p_hours timestamptz[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM report_transition_hourly WHERE site_id = p_site AND hour = ANY (p_hours);
    INSERT INTO report_transition_hourly (site_id, hour, from_region, to_region, transitions, inferred)
    SELECT p_site, date_trunc('hour', t.at, 'UTC') AS hour, t.from_region, t.to_region,
           count(*), count(*) FILTER (WHERE t.inferred)
    FROM transitions t
    WHERE t.site_id = p_site
      AND t.at >= (SELECT min(h) FROM unnest(p_hours) h)
      AND t.at < (SELECT max(h) FROM unnest(p_hours) h) + interval '1 hour'
      AND date_trunc('hour', t.at, 'UTC') IN (SELECT unnest(p_hours))
    GROUP BY hour, t.from_region, t.to_region;
$$;

-- Whole journeys and their contiguous sub-paths of 2 to 4 regions, per day of started_at.
CREATE FUNCTION report_refresh_paths(p_site text, p_days timestamptz[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM report_path_daily WHERE site_id = p_site AND day = ANY (p_days);
    WITH js AS (
        SELECT date_trunc('day', j.started_at, 'UTC') AS day, j.regions, cardinality(j.regions) AS n
        FROM journeys j
        WHERE j.site_id = p_site
          AND j.started_at >= (SELECT min(d) FROM unnest(p_days) d)
          AND j.started_at < (SELECT max(d) FROM unnest(p_days) d) + interval '1 day'
          AND date_trunc('day', j.started_at, 'UTC') IN (SELECT unnest(p_days))
          AND cardinality(j.regions) > 0
    ), pieces AS (
        SELECT day, 'journey' AS kind, n AS length, array_to_string(regions, ' > ') AS path FROM js
        UNION ALL
        SELECT js.day, 'subpath', len, array_to_string(js.regions[i:i + len - 1], ' > ')
        FROM js, generate_series(2, 4) AS len, generate_series(1, js.n - len + 1) AS i
    )
    INSERT INTO report_path_daily (site_id, day, kind, length, path, occurrences)
    SELECT p_site, day, kind, length, path, count(*) FROM pieces GROUP BY day, kind, length, path;
$$;

CREATE FUNCTION report_refresh_capture(p_site text, p_period text, p_starts timestamptz[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM report_capture_rollup WHERE site_id = p_site AND period = p_period AND period_start = ANY (p_starts);
    WITH lo_hi AS (
        SELECT min(s) AS lo, max(s) + ('1 ' || p_period)::interval AS hi FROM unnest(p_starts) s
    ), heard AS (
        SELECT DISTINCT date_trunc(p_period, e.hour, 'UTC') AS ps, e.region_id, e.device_id
        FROM entrance_heard e, lo_hi
        WHERE e.site_id = p_site AND e.hour >= lo_hi.lo AND e.hour < lo_hi.hi
          AND date_trunc(p_period, e.hour, 'UTC') IN (SELECT unnest(p_starts))
    ), inside AS (
        SELECT DISTINCT date_trunc(p_period, v.entered_at, 'UTC') AS ps, v.device_id
        FROM visits v, lo_hi
        WHERE v.site_id = p_site AND v.entered_at >= lo_hi.lo AND v.entered_at < lo_hi.hi
    )
    INSERT INTO report_capture_rollup (site_id, period, period_start, region_id, heard, visitors)
    SELECT p_site, p_period, h.ps, h.region_id, count(*), count(i.device_id)
    FROM heard h LEFT JOIN inside i ON i.ps = h.ps AND i.device_id = h.device_id
    GROUP BY h.ps, h.region_id;
$$;

CREATE FUNCTION waymark_report_refresh(p_site text DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public SET TimeZone = 'UTC'
    SET work_mem = '128MB' AS $$
DECLARE
    s text;
    hours timestamptz[];
    days timestamptz[];
    weeks timestamptz[];
    refreshed integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('waymark_report_refresh'));
    FOR s IN SELECT DISTINCT site_id FROM report_dirty_hours WHERE p_site IS NULL OR site_id = p_site LOOP
        WITH taken AS (DELETE FROM report_dirty_hours WHERE site_id = s RETURNING hour)
        SELECT array_agg(DISTINCT hour) INTO hours FROM taken;
        CONTINUE WHEN hours IS NULL;
        days := ARRAY(SELECT DISTINCT date_trunc('day', h, 'UTC') FROM unnest(hours) h);
        weeks := ARRAY(SELECT DISTINCT date_trunc('week', h, 'UTC') FROM unnest(hours) h);

        PERFORM report_refresh_first_visits(s, hours);
        PERFORM report_refresh_entered(s, 'hour', hours);
        PERFORM report_refresh_presence(s, hours);
        PERFORM report_refresh_entered(s, 'day', days);
        PERFORM report_refresh_presence_rollup(s, 'day', days);
        PERFORM report_refresh_entered(s, 'week', weeks);
        PERFORM report_refresh_presence_rollup(s, 'week', weeks);
        PERFORM report_refresh_transitions(s, hours);
        PERFORM report_refresh_paths(s, days);
        PERFORM report_refresh_capture(s, 'hour', hours);
        PERFORM report_refresh_capture(s, 'day', days);
        PERFORM report_refresh_capture(s, 'week', weeks);
        refreshed := refreshed + cardinality(hours);
    END LOOP;
    RETURN refreshed;
END $$;
COMMENT ON FUNCTION waymark_report_refresh(text) IS 'Brings the report rollups up to date for the hours changed since the last call (one site, or all when NULL); returns how many hours it rebuilt. Safe to call at any time and concurrently; runs with the rights of the schema owner so the read-only report role may call it.';
