-- Waymark reports, part 11: waymark_report_refresh() on the set-based helpers of 0108/0109, and
-- the per-period helpers of 0102/0103 dropped.
--
-- The refresh takes the hours the triggers marked (report_dirty_hours) and rebuilds, run by run of
-- consecutive periods: the hour rows, transitions, first visits, path counts and hourly capture of
-- those hours; then the days that contain them (day rows, daily path sums, daily capture); then the
-- ISO weeks that contain them (week rows, weekly capture). Hour work reads only the dirty hours'
-- rows. Day and week rows take their additive figures (and paths) from the hour rows; their
-- distinct devices, dwell percentiles and capture are exact for the period and so read the
-- period's visits.

CREATE OR REPLACE FUNCTION waymark_report_refresh(p_site text DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public SET TimeZone = 'UTC'
    SET work_mem = '256MB' SET plan_cache_mode = 'force_custom_plan' SET jit = off AS $$
DECLARE
    s text;
    hours timestamptz[];
    r record;
    refreshed integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('waymark_report_refresh'));
    FOR s IN SELECT DISTINCT site_id FROM report_dirty_hours WHERE p_site IS NULL OR site_id = p_site LOOP
        WITH taken AS (DELETE FROM report_dirty_hours WHERE site_id = s RETURNING hour)
        SELECT array_agg(DISTINCT hour) INTO hours FROM taken;
        CONTINUE WHEN hours IS NULL;

        FOR r IN SELECT * FROM report_runs(hours, interval '1 hour') LOOP
            PERFORM report_rebuild_hours(s, r.lo, r.hi);
            PERFORM report_rebuild_moves(s, r.lo, r.hi);
            PERFORM report_rebuild_paths(s, r.lo, r.hi);
            PERFORM report_rebuild_capture(s, 'hour', r.lo, r.hi);
        END LOOP;
        FOR r IN SELECT * FROM report_runs(ARRAY(SELECT date_trunc('day', h, 'UTC') FROM unnest(hours) h), interval '1 day') LOOP
            PERFORM report_rebuild_periods(s, 'day', r.lo, r.hi);
            PERFORM report_rebuild_path_days(s, r.lo, r.hi);
            PERFORM report_rebuild_capture(s, 'day', r.lo, r.hi);
        END LOOP;
        FOR r IN SELECT * FROM report_runs(ARRAY(SELECT date_trunc('week', h, 'UTC') FROM unnest(hours) h), interval '1 week') LOOP
            PERFORM report_rebuild_periods(s, 'week', r.lo, r.hi);
            PERFORM report_rebuild_capture(s, 'week', r.lo, r.hi);
        END LOOP;
        refreshed := refreshed + cardinality(hours);
    END LOOP;
    RETURN refreshed;
END $$;
COMMENT ON FUNCTION waymark_report_refresh(text) IS 'Brings the report rollups up to date for the hours changed since the last call (one site, or all when NULL); returns how many hours it rebuilt. Safe to call at any time and concurrently; runs with the rights of the schema owner so the read-only report role may call it.';

DROP FUNCTION report_refresh_entered(text, text, timestamptz[]);
DROP FUNCTION report_refresh_presence(text, timestamptz[]);
DROP FUNCTION report_refresh_presence_rollup(text, text, timestamptz[]);
DROP FUNCTION report_refresh_first_visits(text, timestamptz[]);
DROP FUNCTION report_refresh_transitions(text, timestamptz[]);
DROP FUNCTION report_refresh_paths(text, timestamptz[]);
DROP FUNCTION report_refresh_capture(text, text, timestamptz[]);
