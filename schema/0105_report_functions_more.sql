-- Waymark reports, part 6: paths, capture, loyalty, heatmap and gateway health (see 0104 for the
-- conventions shared by every report).

CREATE FUNCTION waymark_report_paths(p_site text, p_from timestamptz, p_to timestamptz,
                                     p_region text DEFAULT NULL, p_period text DEFAULT 'day', p_limit integer DEFAULT 20)
RETURNS TABLE (kind text, length integer, rank bigint, path text, occurrences bigint, share double precision)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    IF p_limit IS NULL OR p_limit < 1 THEN
        RAISE EXCEPTION 'limit % is not valid', p_limit USING ERRCODE = '22023', HINT = 'use a positive number';
    END IF;
    RETURN QUERY
    WITH days AS (
        SELECT d.kind, d.length, d.path, d.occurrences FROM report_path_daily d
        WHERE d.site_id = p_site AND d.day >= date_trunc('day', p_from, 'UTC') AND d.day < p_to
    ), totals AS (
        SELECT d.kind, CASE WHEN d.kind = 'journey' THEN 0 ELSE d.length END AS grp, sum(d.occurrences) AS total
        FROM days d GROUP BY 1, 2
    ), p AS (
        SELECT d.kind, d.length, d.path, sum(d.occurrences)::bigint AS n,
               CASE WHEN d.kind = 'journey' THEN 0 ELSE d.length END AS grp
        FROM days d
        WHERE p_region IS NULL OR strpos(' > ' || d.path || ' > ', ' > ' || p_region || ' > ') > 0
        GROUP BY d.kind, d.length, d.path
    ), ranked AS (
        SELECT p.*, row_number() OVER (PARTITION BY p.kind, p.grp ORDER BY p.n DESC, p.path) AS rk FROM p
    )
    SELECT r.kind, r.length, r.rk, r.path, r.n, (r.n / t.total)::double precision
    FROM ranked r JOIN totals t ON t.kind = r.kind AND t.grp = r.grp
    WHERE r.rk <= p_limit
    ORDER BY r.kind, r.grp, r.rk;
END $$;
COMMENT ON FUNCTION waymark_report_paths(text, timestamptz, timestamptz, text, text, integer) IS 'Paths over journeys that started on the UTC days of the range: the most common whole journeys (kind journey: region ids joined with '' > '', consecutive repeats collapsed; share of all journeys) and, per length 2 to 4, the most common contiguous sub-paths (kind subpath; share of all sub-paths of that length). Top p_limit of each; with a region, only paths that pass through it.';

CREATE FUNCTION waymark_report_capture(p_site text, p_from timestamptz, p_to timestamptz,
                                       p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (period_start timestamptz, region_id text, region_name text, heard bigint, visitors bigint,
               passers_by bigint, capture_rate double precision)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    SELECT c.period_start, c.region_id, coalesce(g.name, c.region_id), c.heard, c.visitors, c.heard - c.visitors,
           c.visitors::double precision / c.heard
    FROM report_capture_rollup c
    LEFT JOIN regions g ON g.site_id = c.site_id AND g.region_id = c.region_id
    WHERE c.site_id = p_site AND c.period = p_period
      AND c.period_start >= date_trunc(p_period, p_from, 'UTC') AND c.period_start < p_to
      AND (p_region IS NULL OR c.region_id = p_region) AND c.heard > 0
    ORDER BY c.period_start, c.region_id;
END $$;
COMMENT ON FUNCTION waymark_report_capture(text, timestamptz, timestamptz, text, text) IS 'Entrance capture: per period and entrance region, devices heard by the entrance gateways (entrance_heard), visitors = those with a visit to any region entering in the same period, passers-by = heard but never inside, and capture_rate = visitors / heard.';

CREATE FUNCTION waymark_report_loyalty(p_site text, p_from timestamptz, p_to timestamptz,
                                       p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (period_start timestamptz, devices bigint, new_devices bigint, returning_devices bigint,
               returning_share double precision)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, NULL, p_period);
    IF p_region IS NOT NULL THEN
        RAISE EXCEPTION 'the loyalty report is site-wide' USING ERRCODE = '22023', HINT = 'omit the region';
    END IF;
    RETURN QUERY
    WITH firsts AS (
        SELECT date_trunc(p_period, f.first_visit_at, 'UTC') AS ps, count(*) AS n
        FROM report_device_first_visit f
        WHERE f.site_id = p_site AND f.first_visit_at >= date_trunc(p_period, p_from, 'UTC')
          AND f.first_visit_at < p_to + ('1 ' || p_period)::interval
        GROUP BY 1
    )
    SELECT s.period_start, s.devices, coalesce(f.n, 0), s.devices - coalesce(f.n, 0),
           (s.devices - coalesce(f.n, 0))::double precision / s.devices
    FROM report_site_rollup s
    LEFT JOIN firsts f ON f.ps = s.period_start
    WHERE s.site_id = p_site AND s.period = p_period
      AND s.period_start >= date_trunc(p_period, p_from, 'UTC') AND s.period_start < p_to AND s.devices > 0
    ORDER BY s.period_start;
END $$;
COMMENT ON FUNCTION waymark_report_loyalty(text, timestamptz, timestamptz, text, text) IS 'Loyalty: per period, devices with a visit entering in the period; new = those whose first visit ever at the site is in the period; returning = the others (they visited before the period). Site-wide: the region must be NULL.';

CREATE FUNCTION waymark_report_heatmap(p_site text, p_from timestamptz, p_to timestamptz,
                                       p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (day_of_week integer, day_name text,
               h00 bigint,
               h01 bigint,
               h02 bigint,
               h03 bigint,
               h04 bigint,
               h05 bigint,
               h06 bigint,
               h07 bigint,
               h08 bigint,
               h09 bigint,
               h10 bigint,
               h11 bigint,
               h12 bigint,
               h13 bigint,
               h14 bigint,
               h15 bigint,
               h16 bigint,
               h17 bigint,
               h18 bigint,
               h19 bigint,
               h20 bigint,
               h21 bigint,
               h22 bigint,
               h23 bigint,
               total bigint)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    WITH c AS (
        SELECT extract(isodow FROM r.period_start)::integer AS dow, extract(hour FROM r.period_start)::integer AS hr,
               r.visits
        FROM report_region_rollup r
        WHERE r.site_id = p_site AND r.period = 'hour'
          AND r.period_start >= date_trunc('hour', p_from, 'UTC') AND r.period_start < p_to
          AND (p_region IS NULL OR r.region_id = p_region)
    )
    SELECT d.dow, (ARRAY['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'])[d.dow],
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 0), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 1), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 2), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 3), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 4), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 5), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 6), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 7), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 8), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 9), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 10), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 11), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 12), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 13), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 14), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 15), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 16), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 17), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 18), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 19), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 20), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 21), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 22), 0)::bigint,
           coalesce(sum(c.visits) FILTER (WHERE c.hr = 23), 0)::bigint,
           coalesce(sum(c.visits), 0)::bigint
    FROM generate_series(1, 7) AS d(dow)
    LEFT JOIN c ON c.dow = d.dow
    GROUP BY d.dow
    ORDER BY d.dow;
END $$;
COMMENT ON FUNCTION waymark_report_heatmap(text, timestamptz, timestamptz, text, text) IS 'Heatmap: visits (entering, all regions or one) over whole UTC hours of the range, summed into a grid of ISO day of week (1 = Monday) by UTC hour of day (h00..h23), with a row total. The period argument is accepted and ignored.';
