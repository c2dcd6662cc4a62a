-- Waymark reports, part 15: the rollups keep the figures of history that retention dropped.
--
-- Retention (schema 0011, waymark_drop_history_partitions) drops whole months of visits,
-- transitions and region events, and deletes the journeys and entrance sightings before them.
-- DROP TABLE fires no trigger, so no hour is marked; but a late row for a dropped month (it lands
-- in the default partition until the next retention run deletes it) or the deletion of old
-- journeys marks hours before the horizon, and rebuilding such an hour from what is left would
-- replace its counts with nearly nothing. So:
--
--   waymark_report_refresh  takes the marked hours as before, but leaves every hour before
--                           history_horizon.kept_from as it is (the marks are discarded). Day and
--                           week figures come from report_hour_members, which keeps the dropped
--                           hours' contributions, so a week that straddles the horizon stays
--                           exact when its later hours change.
--   waymark_report_rebuild  rebuilds from the horizon on: the rollups and refresh state of
--                           earlier hours (and of the days before it) are kept; the ISO week that
--                           contains the horizon is rebuilt from the hour state of all its hours.
--
-- Without retention (no history_horizon row) both behave exactly as in 0112.

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
COMMENT ON FUNCTION waymark_report_refresh(text) IS 'Brings the report rollups up to date for the hours changed since the last call (one site, or all when NULL); returns how many hours it rebuilt. Cost follows the changed hours: day and week figures are updated from those hours'' changes (schema 0112). Hours before the retention horizon (history_horizon) are left as they are: their history was dropped (schema 0114). Safe to call at any time and concurrently; runs with the rights of the schema owner so the read-only report role may call it.';

-- As in 0112, from the retention horizon on.
CREATE OR REPLACE FUNCTION waymark_report_rebuild(p_site text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    kept_from timestamptz := coalesce((SELECT h.kept_from FROM history_horizon h), '-infinity');
    -- The ISO week containing the horizon begins before it (unless the horizon is a Monday).
    week0 timestamptz := date_trunc('week', kept_from, 'UTC');
    refreshed integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM sites WHERE site_id = p_site) THEN
        RAISE EXCEPTION 'unknown site %', quote_literal(p_site) USING ERRCODE = '22023',
            HINT = 'sites in this database: ' || coalesce((SELECT string_agg(site_id, ', ' ORDER BY site_id) FROM sites), '(none)');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('waymark_report_refresh'));
    DELETE FROM report_region_rollup WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_site_rollup WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_capture_rollup WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_transition_hourly WHERE site_id = p_site AND hour >= kept_from;
    DELETE FROM report_path_hourly WHERE site_id = p_site AND hour >= kept_from;
    DELETE FROM report_path_daily WHERE site_id = p_site AND day >= kept_from;
    DELETE FROM report_device_first_visit WHERE site_id = p_site AND first_visit_at >= kept_from;
    DELETE FROM report_hour_members WHERE site_id = p_site AND hour >= kept_from;
    DELETE FROM report_period_members WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_period_counts WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_period_dwell WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    DELETE FROM report_period_dwell_bins WHERE site_id = p_site
        AND period_start >= CASE period WHEN 'week' THEN week0 ELSE kept_from END;
    INSERT INTO report_dirty_hours (site_id, hour)
    SELECT p_site, h FROM (
        SELECT generate_series(date_trunc('hour', v.entered_at, 'UTC'),
                               date_trunc('hour', greatest(v.exited_at, v.entered_at), 'UTC'), interval '1 hour') AS h
        FROM visits v WHERE v.site_id = p_site
        UNION SELECT date_trunc('hour', t.at, 'UTC') FROM transitions t WHERE t.site_id = p_site
        UNION SELECT date_trunc('hour', j.started_at, 'UTC') FROM journeys j WHERE j.site_id = p_site
        UNION SELECT e.hour FROM entrance_heard e WHERE e.site_id = p_site
    ) x
    WHERE h >= kept_from
    ON CONFLICT DO NOTHING;
    refreshed := waymark_report_refresh(p_site);
    IF week0 < kept_from AND kept_from < 'infinity' THEN
        -- Its figures are a function of its hours' state, before and after the horizon.
        PERFORM report_rebuild_period_members(p_site, 'week', week0, week0 + interval '1 week');
        PERFORM report_rebuild_periods(p_site, 'week', week0, week0 + interval '1 week');
        PERFORM report_rebuild_capture_periods(p_site, 'week', week0, week0 + interval '1 week');
    END IF;
    RETURN refreshed;
END $$;
COMMENT ON FUNCTION waymark_report_rebuild(text) IS 'Rebuilds the report rollups of the site from visits, transitions, journeys and entrance_heard (as a first full refresh would) and returns the number of hours rebuilt. After retention (history_horizon) only from the horizon on: the rollups of the dropped history are kept as they are, the week containing the horizon is recomputed from its hours. For recovery when the refresh reports an inconsistent state; takes minutes on a large history.';
