-- Waymark reports, part 5: the reports of `waymark report`, one SQL function each, runnable by hand:
--     SELECT waymark_report_refresh();
--     SELECT * FROM waymark_report_traffic('demo-museum', '2026-06-01', '2026-06-08', NULL, 'day');
-- Every report takes (site, from, to, region, period): the range is [from, to); periods are UTC
-- hours, UTC days or ISO weeks (Monday 00:00 UTC); a period is included when it starts before `to`
-- and does not end before `from` (so the range widens to whole periods); periods without activity
-- have no row. Reports count devices (tags, phones, badges), never people.

-- Checks the common arguments; raises an error that names the valid choices.
CREATE FUNCTION report_check_args(p_site text, p_from timestamptz, p_to timestamptz, p_region text, p_period text)
RETURNS void LANGUAGE plpgsql STABLE AS $$
DECLARE
    known text;
BEGIN
    IF p_period IS NULL OR p_period NOT IN ('hour', 'day', 'week') THEN
        RAISE EXCEPTION 'period % is not valid', coalesce(quote_literal(p_period), 'NULL')
            USING ERRCODE = '22023', HINT = 'use one of: hour, day, week';
    END IF;
    IF p_from IS NULL OR p_to IS NULL OR p_to <= p_from THEN
        RAISE EXCEPTION 'the range [%, %) is empty', p_from, p_to
            USING ERRCODE = '22023', HINT = 'pass from < to';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sites WHERE site_id = p_site) THEN
        SELECT string_agg(site_id, ', ' ORDER BY site_id) INTO known FROM sites;
        RAISE EXCEPTION 'unknown site %', quote_literal(p_site)
            USING ERRCODE = '22023', HINT = 'sites in this database: ' || coalesce(known, '(none; has the aggregator run?)');
    END IF;
    IF p_region IS NOT NULL AND NOT EXISTS (SELECT 1 FROM regions WHERE site_id = p_site AND region_id = p_region) THEN
        SELECT string_agg(region_id, ', ' ORDER BY region_id) INTO known FROM regions WHERE site_id = p_site;
        RAISE EXCEPTION 'unknown region % at site %', quote_literal(p_region), quote_literal(p_site)
            USING ERRCODE = '22023', HINT = 'regions: ' || coalesce(known, '(none)');
    END IF;
END $$;

CREATE FUNCTION waymark_report_traffic(p_site text, p_from timestamptz, p_to timestamptz,
                                       p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (period_start timestamptz, region_id text, region_name text, visits bigint, devices bigint, inferred_visits bigint)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    SELECT r.period_start, r.region_id, coalesce(g.name, r.region_id), r.visits, r.devices, r.inferred_visits
    FROM report_region_rollup r
    LEFT JOIN regions g ON g.site_id = r.site_id AND g.region_id = r.region_id
    WHERE r.site_id = p_site AND r.period = p_period
      AND r.period_start >= date_trunc(p_period, p_from, 'UTC') AND r.period_start < p_to
      AND (p_region IS NULL OR r.region_id = p_region) AND r.visits > 0
    ORDER BY r.period_start, r.region_id;
END $$;
COMMENT ON FUNCTION waymark_report_traffic(text, timestamptz, timestamptz, text, text) IS 'Traffic: per period and region, visits that entered the region in the period (inferred visits included and also counted separately) and the exact number of distinct devices among them. Arguments: site, from, to, region or NULL, period (hour|day|week).';

CREATE FUNCTION waymark_report_dwell(p_site text, p_from timestamptz, p_to timestamptz,
                                     p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (period_start timestamptz, region_id text, region_name text, visits bigint,
               p50_s double precision, p90_s double precision, mean_s double precision,
               under_5m bigint, m5_20 bigint, m20_60 bigint, h1_6 bigint, h6_plus bigint)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    SELECT r.period_start, r.region_id, coalesce(g.name, r.region_id), r.dwell_visits,
           r.dwell_p50_s, r.dwell_p90_s, r.dwell_total_s / r.dwell_visits,
           r.dwell_under_5m, r.dwell_5_20m, r.dwell_20_60m, r.dwell_1_6h, r.dwell_6h_plus
    FROM report_region_rollup r
    LEFT JOIN regions g ON g.site_id = r.site_id AND g.region_id = r.region_id
    WHERE r.site_id = p_site AND r.period = p_period
      AND r.period_start >= date_trunc(p_period, p_from, 'UTC') AND r.period_start < p_to
      AND (p_region IS NULL OR r.region_id = p_region) AND r.dwell_visits > 0
    ORDER BY r.period_start, r.region_id;
END $$;
COMMENT ON FUNCTION waymark_report_dwell(text, timestamptz, timestamptz, text, text) IS 'Dwell: per period and region, over observed (not inferred) visits entering in the period: count, median and 90th percentile dwell in seconds (percentile_cont, exact per period), mean, and how many dwelled under 5 min, 5-20 min, 20-60 min, 1-6 h and 6 h or more (lower bounds inclusive).';

CREATE FUNCTION waymark_report_occupancy(p_site text, p_from timestamptz, p_to timestamptz,
                                         p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (period_start timestamptz, region_id text, region_name text, peak_devices bigint,
               average_devices double precision, device_hours double precision)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    SELECT r.period_start, r.region_id, coalesce(g.name, r.region_id), r.peak_devices,
           r.presence_s / extract(epoch FROM ('1 ' || p_period)::interval)::double precision,
           r.presence_s / 3600.0
    FROM report_region_rollup r
    LEFT JOIN regions g ON g.site_id = r.site_id AND g.region_id = r.region_id
    WHERE r.site_id = p_site AND r.period = p_period
      AND r.period_start >= date_trunc(p_period, p_from, 'UTC') AND r.period_start < p_to
      AND (p_region IS NULL OR r.region_id = p_region) AND r.presence_s > 0
    ORDER BY r.period_start, r.region_id;
END $$;
COMMENT ON FUNCTION waymark_report_occupancy(text, timestamptz, timestamptz, text, text) IS 'Occupancy: per period and region, the largest number of devices present at once, the average number present (device-seconds / period length) and device-hours. A device is present from entered_at (inclusive) to exited_at (exclusive) of each visit.';

CREATE FUNCTION waymark_report_transitions(p_site text, p_from timestamptz, p_to timestamptz,
                                           p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (from_region text, to_region text, transitions bigint, inferred bigint, share_of_exits double precision)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    WITH t AS (
        SELECT h.from_region, h.to_region, sum(h.transitions)::bigint AS n, sum(h.inferred)::bigint AS inf
        FROM report_transition_hourly h
        WHERE h.site_id = p_site AND h.hour >= date_trunc('hour', p_from, 'UTC') AND h.hour < p_to
        GROUP BY h.from_region, h.to_region
    ), x AS (
        SELECT t.*, sum(t.n) OVER (PARTITION BY t.from_region) AS exits FROM t
    )
    SELECT x.from_region, x.to_region, x.n, x.inf, (x.n / x.exits)::double precision
    FROM x
    WHERE p_region IS NULL OR x.from_region = p_region OR x.to_region = p_region
    ORDER BY x.from_region, x.n DESC, x.to_region;
END $$;
COMMENT ON FUNCTION waymark_report_transitions(text, timestamptz, timestamptz, text, text) IS 'Transition matrix over whole UTC hours in the range: per ordered pair of regions, transitions (inferred steps included and also counted separately) and their share of all exits from the from-region. With a region: only pairs that start or end there. The period argument is accepted and ignored.';
