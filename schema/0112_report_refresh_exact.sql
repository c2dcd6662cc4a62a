-- Waymark reports, part 13: day and week figures that an incremental refresh updates from the
-- dirty hours alone.
--
-- Distinct devices, dwell percentiles and entrance capture of a day or an ISO week cannot be added
-- up from hour rows, so 0109 recomputed them from all the visits of every touched day and week: one
-- new hour cost a scan and sort of its whole week. This migration keeps, instead, exact per-period
-- structures that a rebuilt hour updates by first taking its old contribution out and then putting
-- its new one in:
--
--   report_hour_members          what each hour contributed at its last rebuild: per region, the
--                                devices with a visit entering in the hour, the dwell values of
--                                the observed ones, and the devices heard (entrance_heard);
--   report_period_members        per day / week: every (device, region) member with the number of
--                                the period's hours it appears in; a member is removed when that
--                                number reaches 0, so distinct devices = number of members;
--   report_period_counts         the member counts per period and region (and site-wide), and the
--                                capture visitors, maintained from the members that came and went;
--   report_period_dwell,         per day / week and region: every distinct dwell value with how
--   report_period_dwell_bins     many observed visits had it, and the same counts per 10-s bin, so
--                                an exact percentile_cont is found by walking cumulative counts
--                                over the bins and then over the values of one bin, never by
--                                sorting the period's visits.
--
-- report_path_daily likewise takes the changed hours' path counts out and in (0109 summed all the
-- day's hour rows again).
--
-- All period structures are a function of report_hour_members only (never of visits read in
-- another statement), so a visit that changes while a refresh runs cannot make them drift: its
-- hour is marked dirty again and the next refresh takes out exactly what this one put in.
-- A period with at least half of its hours dirty (a bulk load, a first refresh) is instead
-- rebuilt from its hours' state in a few set-based statements; both paths give the same rows.
--
-- Device and region ids in these tables use the "C" collation (byte order: cheaper sorts and
-- joins; equality is the same as under any deterministic collation).
--
-- Existing databases: the structures start empty and every hour with visits or entrance sightings
-- is marked dirty here, so the next waymark_report_refresh() builds them (on a large history that
-- first refresh is a full one: minutes at ten million visits). Until then the rollups keep their
-- old, correct rows.

-- Scratch space of the running refresh (under its advisory lock): the dirty hours' state before
-- their rebuild. A permanent unlogged table rather than a temporary one, since the refresh runs
-- with the owner's rights (SECURITY DEFINER) and must not use tables a caller could have created
-- in its own temporary schema.
CREATE UNLOGGED TABLE report_refresh_old_hours (
    hour       timestamptz NOT NULL,
    region_id  text COLLATE "C" NOT NULL,
    devices    text[] NOT NULL,
    dwells     double precision[] NOT NULL,
    heard      text[] NOT NULL
);
COMMENT ON TABLE report_refresh_old_hours IS 'Scratch table of waymark_report_refresh(): the report_hour_members rows of the hours being rebuilt, as they were before; empty outside a refresh.';
CREATE UNLOGGED TABLE report_refresh_old_paths (
    hour         timestamptz NOT NULL,
    kind         text NOT NULL,
    length       integer NOT NULL,
    path         text NOT NULL,
    occurrences  bigint NOT NULL
);
COMMENT ON TABLE report_refresh_old_paths IS 'Scratch table of waymark_report_refresh(): the report_path_hourly rows of the hours being rebuilt in days that take hour changes, as they were before; empty outside a refresh.';

CREATE TABLE report_hour_members (
    site_id    text NOT NULL,
    hour       timestamptz NOT NULL,
    region_id  text COLLATE "C" NOT NULL,
    devices    text[] NOT NULL,
    dwells     double precision[] NOT NULL,
    heard      text[] NOT NULL,
    PRIMARY KEY (site_id, hour, region_id)
);
COMMENT ON TABLE report_hour_members IS 'What each UTC hour contributed to the day and week figures at its last refresh, per region: the input of report_period_members, report_period_counts and report_period_dwell*. Personal data (device ids): same access as visits.';
COMMENT ON COLUMN report_hour_members.devices IS 'Distinct devices with a visit (inferred or not) entering the region in the hour.';
COMMENT ON COLUMN report_hour_members.dwells IS 'Dwell seconds of the observed (not inferred) visits entering the region in the hour, one element per visit.';
COMMENT ON COLUMN report_hour_members.heard IS 'Distinct devices heard by the region''s gateways in the hour (entrance_heard).';

CREATE TABLE report_period_members (
    site_id       text NOT NULL,
    period        text NOT NULL CHECK (period IN ('day', 'week')),
    period_start  timestamptz NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('visit', 'heard')),
    device_id     text COLLATE "C" NOT NULL,
    region_id     text COLLATE "C" NOT NULL,
    hours         integer NOT NULL CHECK (hours > 0),
    PRIMARY KEY (site_id, period, period_start, kind, device_id, region_id)
);
COMMENT ON TABLE report_period_members IS 'Per UTC day and ISO week: each device with a visit entering a region in the period (kind visit) or heard at an entrance region in it (kind heard), and in how many of the period''s hours. Distinct devices of a period are its members; a device is in the site''s period when it is a visit member of any region. Personal data.';

CREATE TABLE report_period_counts (
    site_id       text NOT NULL,
    period        text NOT NULL CHECK (period IN ('day', 'week')),
    period_start  timestamptz NOT NULL,
    scope         text NOT NULL CHECK (scope IN ('region', 'site')),
    region_id     text COLLATE "C" NOT NULL,
    devices       bigint NOT NULL DEFAULT 0,
    heard         bigint NOT NULL DEFAULT 0,
    visitors      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, period, period_start, scope, region_id)
);
COMMENT ON TABLE report_period_counts IS 'Exact distinct counts per UTC day / ISO week, kept equal to the counts of report_period_members: scope region — devices with a visit entering the region, devices heard at it (heard) and of those the devices with a visit anywhere in the period (visitors); scope site (region_id '''') — devices with a visit entering any region.';

CREATE TABLE report_period_dwell (
    site_id       text NOT NULL,
    period        text NOT NULL CHECK (period IN ('day', 'week')),
    period_start  timestamptz NOT NULL,
    region_id     text COLLATE "C" NOT NULL,
    bin           bigint NOT NULL,
    dwell_s       double precision NOT NULL,
    n             bigint NOT NULL CHECK (n > 0),
    PRIMARY KEY (site_id, period, period_start, region_id, bin, dwell_s)
);
COMMENT ON TABLE report_period_dwell IS 'Per UTC day / ISO week and region: every distinct dwell value of the observed visits entering in the period and how many had it (bin = report_dwell_bin(dwell_s)); the dwell percentiles are read from it.';

CREATE TABLE report_period_dwell_bins (
    site_id       text NOT NULL,
    period        text NOT NULL CHECK (period IN ('day', 'week')),
    period_start  timestamptz NOT NULL,
    region_id     text COLLATE "C" NOT NULL,
    bin           bigint NOT NULL,
    n             bigint NOT NULL CHECK (n > 0),
    PRIMARY KEY (site_id, period, period_start, region_id, bin)
);
COMMENT ON TABLE report_period_dwell_bins IS 'report_period_dwell summed per bin (10 s of dwell): cumulative counts over these few rows locate the bin that holds a given rank.';

-- The bin of a dwell value: 10-second steps, clamped so that infinities and NaN get the outermost
-- bins. Bins are in the same order as the values (NaN sorts last in PostgreSQL, as in its bin).
CREATE FUNCTION report_dwell_bin(p_dwell_s double precision) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT least(greatest(floor(p_dwell_s / 10), -1e15::float8), 1e15::float8)::bigint;
$$;
COMMENT ON FUNCTION report_dwell_bin(double precision) IS 'Bin of a dwell value in report_period_dwell: floor(dwell_s / 10), clamped to ±1e15 (infinities, NaN).';

-- The hours' state for every hour in [p_lo, p_hi) (whose old rows the refresh has moved to
-- report_refresh_old_hours): one statement, so devices and dwells come from one snapshot.
CREATE FUNCTION report_rebuild_hour_members(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    INSERT INTO report_hour_members (site_id, hour, region_id, devices, dwells, heard)
    SELECT p_site, hour, region_id, coalesce(v.devices, '{}'), coalesce(v.dwells, '{}'), coalesce(h.heard, '{}')
    FROM (
        SELECT date_trunc('hour', v.entered_at, 'UTC') AS hour, v.region_id COLLATE "C" AS region_id,
               array_agg(DISTINCT v.device_id COLLATE "C") AS devices,
               coalesce(array_agg(v.dwell_s) FILTER (WHERE NOT v.inferred), '{}') AS dwells
        FROM visits v
        WHERE v.site_id = p_site AND v.entered_at >= p_lo AND v.entered_at < p_hi
        GROUP BY 1, 2
    ) v
    FULL JOIN (
        SELECT e.hour, e.region_id COLLATE "C" AS region_id, array_agg(DISTINCT e.device_id COLLATE "C") AS heard
        FROM entrance_heard e
        WHERE e.site_id = p_site AND e.hour >= p_lo AND e.hour < p_hi
        GROUP BY 1, 2
    ) h USING (hour, region_id);
END $$;
COMMENT ON FUNCTION report_rebuild_hour_members(text, timestamptz, timestamptz) IS 'Refresh step: writes report_hour_members for the hours in [lo, hi) from visits and entrance_heard (the caller has removed their old rows). Internal to waymark_report_refresh().';

-- Full path: the members, counts and dwell value counts of every period in [p_lo, p_hi) (whole
-- periods) rebuilt from report_hour_members of all their hours.
CREATE FUNCTION report_rebuild_period_members(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_period_members
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    INSERT INTO report_period_members (site_id, period, period_start, kind, device_id, region_id, hours)
    SELECT p_site, p_period, ps, kind, device_id, region_id, count(*)
    FROM (
        SELECT date_trunc(p_period, h.hour, 'UTC') AS ps, 'visit' AS kind, x COLLATE "C" AS device_id, h.region_id COLLATE "C" AS region_id
        FROM report_hour_members h, unnest(h.devices) x
        WHERE h.site_id = p_site AND h.hour >= p_lo AND h.hour < p_hi
        UNION ALL
        SELECT date_trunc(p_period, h.hour, 'UTC'), 'heard', x COLLATE "C", h.region_id COLLATE "C"
        FROM report_hour_members h, unnest(h.heard) x
        WHERE h.site_id = p_site AND h.hour >= p_lo AND h.hour < p_hi
    ) s
    GROUP BY ps, kind, device_id, region_id;

    DELETE FROM report_period_counts
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    -- One sort by device marks each heard member whose device is inside in the period (a visit
    -- member of any region); no join, so no plan depends on statistics of rows just written.
    INSERT INTO report_period_counts (site_id, period, period_start, scope, region_id, devices, heard, visitors)
    WITH m AS (
        SELECT period_start, kind, device_id, region_id,
               bool_or(kind = 'visit') OVER (PARTITION BY period_start, device_id) AS inside,
               row_number() OVER (PARTITION BY period_start, device_id, kind) AS nth
        FROM report_period_members
        WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi
    )
    SELECT p_site, p_period, period_start, 'region', region_id,
           count(*) FILTER (WHERE kind = 'visit'), count(*) FILTER (WHERE kind = 'heard'),
           count(*) FILTER (WHERE kind = 'heard' AND inside)
    FROM m GROUP BY period_start, region_id
    UNION ALL
    SELECT p_site, p_period, period_start, 'site', '', count(*), 0, 0
    FROM m WHERE kind = 'visit' AND nth = 1 GROUP BY period_start;

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
COMMENT ON FUNCTION report_rebuild_period_members(text, text, timestamptz, timestamptz) IS 'Refresh step, full path: rebuilds report_period_members, report_period_counts and report_period_dwell(_bins) of the days or weeks in [lo, hi) from report_hour_members of all their hours. Internal to waymark_report_refresh().';

-- Incremental path: the periods p_starts take the changes of their dirty hours p_hours: each
-- hour's old state (report_refresh_old_hours) counts -1, its new state (report_hour_members) +1.
-- A (device, region) member whose hour count goes from 0 to positive joins the period, one that
-- reaches 0 leaves it; only those devices are looked at again for the site-wide count and for
-- capture (heard at an entrance and inside anywhere, before and after). Dwell values are added to
-- and taken from the value and bin counts. Cost: the dirty hours' rows, with index look-ups.
CREATE FUNCTION report_apply_period_changes(p_site text, p_period text, p_starts timestamptz[], p_hours timestamptz[]) RETURNS void
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
    ), changes AS MATERIALIZED (
        -- Members whose hour count changes, with the count before and after.
        SELECT c.ps, c.kind, c.device_id, c.region_id, coalesce(m.hours, 0) AS before, coalesce(m.hours, 0) + c.delta AS after
        FROM (SELECT ps, kind, device_id, region_id, sum(sign) AS delta FROM steps GROUP BY 1, 2, 3, 4 HAVING sum(sign) <> 0) c
        LEFT JOIN report_period_members m
               ON m.site_id = p_site AND m.period = p_period AND m.period_start = c.ps
              AND m.kind = c.kind AND m.device_id = c.device_id AND m.region_id = c.region_id
    ), crossings AS MATERIALIZED (
        -- Members that join or leave the period.
        SELECT * FROM changes WHERE (before > 0) <> (after > 0)
    ), candidates AS MATERIALIZED (
        -- Devices whose site-wide membership or capture status may change, and their site-wide
        -- membership before and after (a visit member of any region): after, when one of their
        -- changed memberships remains, or an unchanged one exists.
        SELECT d.ps, d.device_id,
               EXISTS (SELECT 1 FROM report_period_members m
                       WHERE m.site_id = p_site AND m.period = p_period AND m.period_start = d.ps
                         AND m.kind = 'visit' AND m.device_id = d.device_id) AS inside_before,
               coalesce(v.remains, false)
               OR EXISTS (SELECT 1 FROM report_period_members m
                          WHERE m.site_id = p_site AND m.period = p_period AND m.period_start = d.ps
                            AND m.kind = 'visit' AND m.device_id = d.device_id
                            AND m.region_id <> ALL (coalesce(v.changed, '{}'))) AS inside_after
        FROM (SELECT DISTINCT ps, device_id FROM crossings) d
        LEFT JOIN (SELECT ps, device_id, bool_or(after > 0) AS remains, array_agg(region_id) AS changed
                   FROM changes WHERE kind = 'visit' GROUP BY ps, device_id) v USING (ps, device_id)
    ), heard_flags AS (
        -- For those devices, every entrance that heard them in the period before or after: a
        -- membership's state after is its change's, or (unchanged) what it was.
        SELECT k.ps, k.device_id, k.inside_before, k.inside_after, h.region_id, h.heard_before, h.heard_after
        FROM candidates k
        JOIN (
            SELECT ps, device_id, region_id, bool_or(before) AS heard_before,
                   coalesce(bool_or(after) FILTER (WHERE from_change), bool_or(before)) AS heard_after
            FROM (
                SELECT m.period_start AS ps, m.device_id, m.region_id, true AS before, NULL::boolean AS after, false AS from_change
                FROM candidates k
                JOIN report_period_members m
                  ON m.site_id = p_site AND m.period = p_period AND m.period_start = k.ps
                 AND m.kind = 'heard' AND m.device_id = k.device_id
                UNION ALL
                SELECT c.ps, c.device_id, c.region_id, c.before > 0, c.after > 0, true
                FROM changes c WHERE c.kind = 'heard'
            ) x
            GROUP BY ps, device_id, region_id
        ) h ON h.ps = k.ps AND h.device_id = k.device_id
    ), count_changes AS (
        SELECT ps, 'region' AS scope, region_id,
               sum((after > 0)::int - (before > 0)::int) FILTER (WHERE kind = 'visit') AS devices,
               sum((after > 0)::int - (before > 0)::int) FILTER (WHERE kind = 'heard') AS heard,
               0 AS visitors
        FROM crossings GROUP BY ps, region_id
        UNION ALL
        SELECT ps, 'site', '', sum(inside_after::int - inside_before::int), 0, 0 FROM candidates GROUP BY ps
        UNION ALL
        SELECT ps, 'region', region_id, 0, 0,
               sum((heard_after AND inside_after)::int - (heard_before AND inside_before)::int)
        FROM heard_flags GROUP BY ps, region_id
    ), counted AS (
        INSERT INTO report_period_counts AS t (site_id, period, period_start, scope, region_id, devices, heard, visitors)
        SELECT p_site, p_period, ps, scope, region_id,
               coalesce(sum(devices), 0), coalesce(sum(heard), 0), coalesce(sum(visitors), 0)
        FROM count_changes GROUP BY ps, scope, region_id
        ON CONFLICT (site_id, period, period_start, scope, region_id) DO UPDATE
        SET devices = t.devices + excluded.devices, heard = t.heard + excluded.heard, visitors = t.visitors + excluded.visitors
    ), left_period AS (
        DELETE FROM report_period_members m USING changes c
        WHERE c.after = 0 AND m.site_id = p_site AND m.period = p_period AND m.period_start = c.ps
          AND m.kind = c.kind AND m.device_id = c.device_id AND m.region_id = c.region_id
    ), stayed AS (
        INSERT INTO report_period_members AS m (site_id, period, period_start, kind, device_id, region_id, hours)
        SELECT p_site, p_period, ps, kind, device_id, region_id, after FROM changes WHERE after > 0
        ON CONFLICT (site_id, period, period_start, kind, device_id, region_id) DO UPDATE SET hours = excluded.hours
    )
    SELECT count(*) INTO broken FROM changes WHERE after < 0;
    IF broken > 0 THEN
        RAISE EXCEPTION 'report rollup state is inconsistent: % period member(s) of % would have a negative hour count', broken, p_site
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
COMMENT ON FUNCTION report_apply_period_changes(text, text, timestamptz[], timestamptz[]) IS 'Refresh step, incremental path: applies to the days or weeks p_starts the difference between the old state of their dirty hours p_hours (report_refresh_old_hours) and the new one (report_hour_members): members, counts, capture visitors and dwell value counts. Internal to waymark_report_refresh().';

-- Exact dwell percentiles (p50, p90) of every region and day / week in [p_lo, p_hi), from
-- report_period_dwell: what percentile_cont(f) WITHIN GROUP (ORDER BY dwell_s) over the period's
-- observed visits returns, computed as PostgreSQL does: with N values, the values of 0-based ranks
-- floor(f * (N - 1)) and ceil(f * (N - 1)), linearly interpolated. Each rank is found by cumulative
-- counts over the period's bins, then over the values of the one bin that holds it.
CREATE FUNCTION report_dwell_percentiles(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz)
RETURNS TABLE (period_start timestamptz, region_id text, p50 double precision, p90 double precision)
LANGUAGE sql STABLE SET TimeZone = 'UTC' AS $$
    WITH bins AS MATERIALIZED (
        SELECT b.period_start, b.region_id COLLATE "C" AS region_id, b.bin, b.n,
               sum(b.n) OVER (PARTITION BY b.period_start, b.region_id ORDER BY b.bin) AS upto,
               sum(b.n) OVER (PARTITION BY b.period_start, b.region_id) AS total
        FROM report_period_dwell_bins b
        WHERE b.site_id = p_site AND b.period = p_period AND b.period_start >= p_lo AND b.period_start < p_hi
    ), located AS (
        -- The bin holding each of the four ranks (two per percentile), and the rank's offset among
        -- that bin's values: one pass over the bins, no join.
        SELECT b.period_start, b.region_id, b.total, b.bin, r.f, r.lower, r.rank, r.rank - (b.upto - b.n) AS offset_in_bin
        FROM bins b
        CROSS JOIN LATERAL (VALUES (0.5::float8, true, floor(0.5::float8 * (b.total - 1)::float8)::bigint),
                                   (0.5::float8, false, ceil(0.5::float8 * (b.total - 1)::float8)::bigint),
                                   (0.9::float8, true, floor(0.9::float8 * (b.total - 1)::float8)::bigint),
                                   (0.9::float8, false, ceil(0.9::float8 * (b.total - 1)::float8)::bigint)) AS r(f, lower, rank)
        WHERE b.upto - b.n <= r.rank AND r.rank < b.upto
    ), valued AS (
        SELECT l.period_start, l.region_id, l.total, l.f, l.lower, l.rank, v.dwell_s
        FROM located l
        CROSS JOIN LATERAL (
            SELECT x.dwell_s
            FROM (SELECT d.dwell_s, sum(d.n) OVER (ORDER BY d.dwell_s) AS upto
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
                    ELSE lo + ((f * (total - 1)::float8 - lo_rank::float8) * (hi - lo)) END AS value
        FROM ends
    )
    SELECT period_start, region_id, max(value) FILTER (WHERE f = 0.5), max(value) FILTER (WHERE f = 0.9)
    FROM percentiles GROUP BY period_start, region_id;
$$;
COMMENT ON FUNCTION report_dwell_percentiles(text, text, timestamptz, timestamptz) IS 'Exact dwell p50 and p90 (percentile_cont semantics) per region and day or week in [lo, hi), from report_period_dwell and report_period_dwell_bins, without sorting visits. Internal to waymark_report_refresh().';

-- Day or week rows of report_region_rollup and report_site_rollup for every period in [p_lo, p_hi)
-- (whole periods). Additive figures are sums of the hour rows (the peak the largest hourly peak),
-- as in 0109; distinct devices come from report_period_counts and the dwell percentiles from
-- report_dwell_percentiles, both current for these periods. Reads no visits.
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
    LEFT JOIN report_dwell_percentiles(p_site, p_period, p_lo, p_hi) x ON x.period_start = h.ps AND x.region_id = h.region_id;
END $$;
COMMENT ON FUNCTION report_rebuild_periods(text, text, timestamptz, timestamptz) IS 'Refresh step: rewrites the day or week rows of report_region_rollup and report_site_rollup in [lo, hi) from the hour rows, report_period_counts and report_dwell_percentiles. Internal to waymark_report_refresh().';

-- Day or week rows of report_capture_rollup in [p_lo, p_hi) from report_period_counts.
CREATE FUNCTION report_rebuild_capture_periods(p_site text, p_period text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_capture_rollup
    WHERE site_id = p_site AND period = p_period AND period_start >= p_lo AND period_start < p_hi;
    INSERT INTO report_capture_rollup (site_id, period, period_start, region_id, heard, visitors)
    SELECT p_site, p_period, c.period_start, c.region_id, c.heard, c.visitors
    FROM report_period_counts c
    WHERE c.site_id = p_site AND c.period = p_period AND c.period_start >= p_lo AND c.period_start < p_hi
      AND c.scope = 'region' AND c.heard > 0;
END $$;
COMMENT ON FUNCTION report_rebuild_capture_periods(text, text, timestamptz, timestamptz) IS 'Refresh step: rewrites the day or week rows of report_capture_rollup in [lo, hi) (entrances with devices heard) from report_period_counts. Internal to waymark_report_refresh().';

-- Transitions per hour and region pair, and first visits, for the hours in [p_lo, p_hi), as in
-- 0109; in addition a device whose recorded first visit lies in these hours gets it recomputed from
-- all its visits (that visit may have been deleted or moved), so the table always equals a rebuild.
CREATE OR REPLACE FUNCTION report_rebuild_moves(p_site text, p_lo timestamptz, p_hi timestamptz) RETURNS void
LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    DELETE FROM report_transition_hourly WHERE site_id = p_site AND hour >= p_lo AND hour < p_hi;
    INSERT INTO report_transition_hourly (site_id, hour, from_region, to_region, transitions, inferred)
    SELECT p_site, date_trunc('hour', t.at, 'UTC'), t.from_region, t.to_region, count(*), count(*) FILTER (WHERE t.inferred)
    FROM transitions t
    WHERE t.site_id = p_site AND t.at >= p_lo AND t.at < p_hi
    GROUP BY 2, 3, 4;

    WITH stale AS (
        SELECT f.device_id,
               (SELECT min(v.entered_at) FROM visits v WHERE v.site_id = p_site AND v.device_id = f.device_id) AS first_visit_at
        FROM report_device_first_visit f
        WHERE f.site_id = p_site AND f.first_visit_at >= p_lo AND f.first_visit_at < p_hi
    ), gone AS (
        DELETE FROM report_device_first_visit f USING stale s
        WHERE f.site_id = p_site AND f.device_id = s.device_id AND s.first_visit_at IS NULL
    )
    UPDATE report_device_first_visit f SET first_visit_at = s.first_visit_at
    FROM stale s
    WHERE f.site_id = p_site AND f.device_id = s.device_id AND s.first_visit_at IS DISTINCT FROM f.first_visit_at
      AND s.first_visit_at IS NOT NULL;

    INSERT INTO report_device_first_visit AS f (site_id, device_id, first_visit_at)
    SELECT p_site, v.device_id, min(v.entered_at)
    FROM visits v
    WHERE v.site_id = p_site AND v.entered_at >= p_lo AND v.entered_at < p_hi
    GROUP BY v.device_id
    ON CONFLICT (site_id, device_id) DO UPDATE SET first_visit_at = excluded.first_visit_at
        WHERE excluded.first_visit_at < f.first_visit_at;
END $$;
COMMENT ON FUNCTION report_rebuild_moves(text, timestamptz, timestamptz) IS 'Refresh step: rewrites report_transition_hourly for the hours in [lo, hi) and brings report_device_first_visit up to date for the devices with a visit in them or a recorded first visit in them. Internal to waymark_report_refresh().';

-- Path counts per hour of journeys.started_at for the hours in [p_lo, p_hi), as report_rebuild_paths
-- of 0109; the replaced rows of hours in p_keep_days are kept in report_refresh_old_paths so that
-- report_apply_path_changes can take them out of their day.
CREATE FUNCTION report_rebuild_path_hours(p_site text, p_lo timestamptz, p_hi timestamptz, p_keep_days timestamptz[])
RETURNS void LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
BEGIN
    WITH old AS (
        DELETE FROM report_path_hourly WHERE site_id = p_site AND hour >= p_lo AND hour < p_hi
        RETURNING hour, kind, length, path, occurrences
    )
    INSERT INTO report_refresh_old_paths (hour, kind, length, path, occurrences)
    SELECT * FROM old WHERE date_trunc('day', hour, 'UTC') = ANY (p_keep_days);
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
COMMENT ON FUNCTION report_rebuild_path_hours(text, timestamptz, timestamptz, timestamptz[]) IS 'Refresh step: rewrites report_path_hourly (whole journeys and their sub-paths of 2 to 4 regions, by hour of started_at) for the hours in [lo, hi), keeping the replaced rows of hours in the given days in report_refresh_old_paths. Internal to waymark_report_refresh().';

-- report_path_daily of the days p_days takes the changes of their dirty hours p_hours: old hour
-- counts (report_refresh_old_paths) out, new ones (report_path_hourly) in. Cost: the hours' rows.
CREATE FUNCTION report_apply_path_changes(p_site text, p_days timestamptz[], p_hours timestamptz[])
RETURNS void LANGUAGE plpgsql SET TimeZone = 'UTC' SET plan_cache_mode = 'force_custom_plan' AS $$
DECLARE
    broken bigint;
BEGIN
    WITH steps AS (
        SELECT date_trunc('day', o.hour, 'UTC') AS day, o.kind, o.length, o.path, -o.occurrences AS delta
        FROM report_refresh_old_paths o
        WHERE date_trunc('day', o.hour, 'UTC') = ANY (p_days)
        UNION ALL
        SELECT date_trunc('day', h.hour, 'UTC'), h.kind, h.length, h.path, h.occurrences
        FROM report_path_hourly h
        WHERE h.site_id = p_site AND h.hour = ANY (p_hours) AND date_trunc('day', h.hour, 'UTC') = ANY (p_days)
    ), changes AS MATERIALIZED (
        SELECT c.day, c.kind, c.length, c.path, coalesce(d.occurrences, 0) + c.delta AS occurrences
        FROM (SELECT day, kind, length, path, sum(delta) AS delta FROM steps GROUP BY 1, 2, 3, 4 HAVING sum(delta) <> 0) c
        LEFT JOIN report_path_daily d
               ON d.site_id = p_site AND d.day = c.day AND d.kind = c.kind AND d.length = c.length AND d.path = c.path
    ), gone AS (
        DELETE FROM report_path_daily d USING changes c
        WHERE c.occurrences = 0 AND d.site_id = p_site AND d.day = c.day AND d.kind = c.kind AND d.length = c.length AND d.path = c.path
    ), kept AS (
        INSERT INTO report_path_daily AS d (site_id, day, kind, length, path, occurrences)
        SELECT p_site, day, kind, length, path, occurrences FROM changes WHERE occurrences > 0
        ON CONFLICT (site_id, day, kind, length, path) DO UPDATE SET occurrences = excluded.occurrences
    )
    SELECT count(*) INTO broken FROM changes WHERE occurrences < 0;
    IF broken > 0 THEN
        RAISE EXCEPTION 'report rollup state is inconsistent: % daily path count(s) of % would be negative', broken, p_site
            USING ERRCODE = 'XX000', HINT = 'rebuild the report rollups: SELECT waymark_report_rebuild(' || quote_literal(p_site) || ');';
    END IF;
END $$;
COMMENT ON FUNCTION report_apply_path_changes(text, timestamptz[], timestamptz[]) IS 'Refresh step, incremental path: applies to report_path_daily of the given days the difference between the old path counts of their dirty hours (report_refresh_old_paths) and the new ones (report_path_hourly). Internal to waymark_report_refresh().';

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
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('waymark_report_refresh'));
    FOR s IN SELECT DISTINCT site_id FROM report_dirty_hours WHERE p_site IS NULL OR site_id = p_site LOOP
        WITH taken AS (DELETE FROM report_dirty_hours WHERE site_id = s RETURNING hour)
        SELECT array_agg(DISTINCT hour) INTO hours FROM taken;
        CONTINUE WHEN hours IS NULL;

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
        ANALYZE report_hour_members, report_period_members, report_period_counts, report_period_dwell,
            report_period_dwell_bins, report_path_daily;
    END IF;
    RETURN refreshed;
END $$;
COMMENT ON FUNCTION waymark_report_refresh(text) IS 'Brings the report rollups up to date for the hours changed since the last call (one site, or all when NULL); returns how many hours it rebuilt. Cost follows the changed hours: day and week figures are updated from those hours'' changes (schema 0112). Safe to call at any time and concurrently; runs with the rights of the schema owner so the read-only report role may call it.';

-- Rebuilds every rollup of a site from its raw rows, in one transaction (readers keep seeing the
-- old rollups until it commits): for recovery, or to check the incremental refresh.
CREATE FUNCTION waymark_report_rebuild(p_site text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET TimeZone = 'UTC' AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM sites WHERE site_id = p_site) THEN
        RAISE EXCEPTION 'unknown site %', quote_literal(p_site) USING ERRCODE = '22023',
            HINT = 'sites in this database: ' || coalesce((SELECT string_agg(site_id, ', ' ORDER BY site_id) FROM sites), '(none)');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('waymark_report_refresh'));
    DELETE FROM report_region_rollup WHERE site_id = p_site;
    DELETE FROM report_site_rollup WHERE site_id = p_site;
    DELETE FROM report_capture_rollup WHERE site_id = p_site;
    DELETE FROM report_transition_hourly WHERE site_id = p_site;
    DELETE FROM report_path_hourly WHERE site_id = p_site;
    DELETE FROM report_path_daily WHERE site_id = p_site;
    DELETE FROM report_device_first_visit WHERE site_id = p_site;
    DELETE FROM report_hour_members WHERE site_id = p_site;
    DELETE FROM report_period_members WHERE site_id = p_site;
    DELETE FROM report_period_counts WHERE site_id = p_site;
    DELETE FROM report_period_dwell WHERE site_id = p_site;
    DELETE FROM report_period_dwell_bins WHERE site_id = p_site;
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT p_site, h FROM (
        SELECT generate_series(date_trunc('hour', v.entered_at, 'UTC'),
                               date_trunc('hour', greatest(v.exited_at, v.entered_at), 'UTC'), interval '1 hour') AS h
        FROM visits v WHERE v.site_id = p_site
        UNION SELECT date_trunc('hour', t.at, 'UTC') FROM transitions t WHERE t.site_id = p_site
        UNION SELECT date_trunc('hour', j.started_at, 'UTC') FROM journeys j WHERE j.site_id = p_site
        UNION SELECT e.hour FROM entrance_heard e WHERE e.site_id = p_site
    ) x
    ON CONFLICT DO NOTHING;
    RETURN waymark_report_refresh(p_site);
END $$;
COMMENT ON FUNCTION waymark_report_rebuild(text) IS 'Rebuilds all report rollups of the site from visits, transitions, journeys and entrance_heard (as a first full refresh would) and returns the number of hours rebuilt. For recovery when the refresh reports an inconsistent state; takes minutes on a large history.';
REVOKE ALL ON FUNCTION waymark_report_rebuild(text) FROM PUBLIC;

-- Existing data: every hour with visits entering or entrance sightings gets its state built by the
-- next refresh (the structures above start empty, which is consistent with no hour state).
INSERT INTO report_dirty_hours (site_id, hour)
SELECT DISTINCT site_id, date_trunc('hour', entered_at, 'UTC') FROM visits
UNION
SELECT DISTINCT site_id, hour FROM entrance_heard
ON CONFLICT DO NOTHING;

COMMENT ON FUNCTION report_runs(timestamptz[], interval) IS 'Refresh helper: the maximal runs [lo, hi) of consecutive periods of length step among the given period starts, in time order.';
DROP FUNCTION report_rebuild_paths(text, timestamptz, timestamptz);  -- replaced by report_rebuild_path_hours
COMMENT ON FUNCTION report_rebuild_path_days(text, timestamptz, timestamptz) IS 'Refresh step, full path: rewrites report_path_daily for the days in [lo, hi) as sums of report_path_hourly. Internal to waymark_report_refresh().';
COMMENT ON FUNCTION report_rebuild_capture(text, text, timestamptz, timestamptz) IS 'Refresh step: rewrites report_capture_rollup for the periods in [lo, hi) from entrance_heard and visits; since 0112 used for hours only (days and weeks: report_rebuild_capture_periods). Internal to waymark_report_refresh().';
