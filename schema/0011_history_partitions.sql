-- Waymark core schema, part 11: the history tables partitioned by month, with retention.
--
-- region_events (by at), visits (by entered_at) and transitions (by at) become natively
-- partitioned tables with one partition per UTC month (<table>_YYYYMM) and a DEFAULT partition
-- (<table>_default) that takes every row no month partition covers (late evidence for a month
-- that has none, a clock far in the future), so no write is ever refused for its time. Retention
-- then drops whole months (waymark_drop_history_partitions) instead of deleting rows. The same
-- writer-thread upkeep that keeps the raw-sighting days (0004, 0006) makes the months ahead:
-- one mechanism for both, no extension, no background worker (see docs/scaling.md, "PostgreSQL
-- over time", for why pg_partman is not used).
--
-- journeys stays one table: it has a visit per journey's few regions fewer rows, and it is the
-- target of visits.journey_id (a foreign key to a partitioned table would need the partition key
-- in the referencing column). Retention deletes the journeys that ended before the kept months.
--
-- Existing databases are converted in place, in this migration's transaction: each table is
-- renamed aside, the partitioned table is created under its name with one partition per month
-- the old rows cover, every row is copied (region_events keeps its seq values and its identity
-- continues after them), and the indexes, triggers (the report rollups' triggers of 0100+ when
-- they exist), comments and grants of the old table are recreated on the new one before the old
-- one is dropped. Copying takes about as long as writing the rows again and holds an exclusive
-- lock on the tables meanwhile: stop the aggregator while migrating (deploy/README.md).

-- The retention horizon: what is before it has been dropped.
CREATE TABLE history_horizon (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    kept_from  timestamptz NOT NULL,
    dropped_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE history_horizon IS 'At most one row: region events, visits and transitions before kept_from (and journeys that ended before it) were dropped by retention (waymark_drop_history_partitions). The report refresh leaves the rollups of earlier hours as they were (schema 0114).';
COMMENT ON COLUMN history_horizon.singleton IS 'Always true: the table holds one row (retention applies to the whole database).';
COMMENT ON COLUMN history_horizon.kept_from IS 'Start (UTC month boundary) of the oldest history kept; only ever moves forward.';
COMMENT ON COLUMN history_horizon.dropped_at IS 'When retention last moved kept_from (server time).';

-- The partitioned tables: key column of each.
CREATE FUNCTION waymark_history_tables() RETURNS TABLE (table_name text, key_column text)
LANGUAGE sql IMMUTABLE AS $$
    VALUES ('region_events', 'at'), ('visits', 'entered_at'), ('transitions', 'at')
$$;
COMMENT ON FUNCTION waymark_history_tables() IS 'The history tables partitioned by month (schema 0011) and the time column each is partitioned by.';

-- Creates the month partition of p_table for the UTC month starting on p_month unless it exists;
-- rows of that month waiting in the default partition are moved into it. Returns 1 when created.
CREATE FUNCTION waymark_history_partition(p_table text, p_month date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    key text := (SELECT key_column FROM waymark_history_tables() WHERE table_name = p_table);
    name text := p_table || '_' || to_char(p_month, 'YYYYMM');
    lo timestamptz := p_month::timestamp AT TIME ZONE 'UTC';
    hi timestamptz := (p_month + interval '1 month')::timestamp AT TIME ZONE 'UTC';
    waiting boolean;
BEGIN
    IF key IS NULL THEN
        RAISE EXCEPTION 'not a history table: %', p_table USING ERRCODE = '22023';
    END IF;
    IF extract(day FROM p_month) <> 1 THEN
        RAISE EXCEPTION 'not the first day of a month: %', p_month USING ERRCODE = '22023';
    END IF;
    IF to_regclass(name) IS NOT NULL THEN
        RETURN 0;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= %L AND %I < %L)',
                   p_table || '_default', key, lo, key, hi) INTO waiting;
    IF NOT waiting THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', name, p_table, lo, hi);
    ELSE
        -- PostgreSQL refuses a partition whose rows sit in the default one: move them first, into
        -- a table that then becomes the partition (rows copied as they are; no trigger fires, the
        -- report rollups already count them).
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, p_table);
        EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
                       p_table || '_default', key, lo, key, hi, name);
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', p_table, name, lo, hi);
    END IF;
    RETURN 1;
END $$;
COMMENT ON FUNCTION waymark_history_partition(text, date) IS 'Creates the partition <table>_YYYYMM of a history table for the UTC month starting on the given day, moving that month''s rows out of <table>_default first; returns 1 when it created one, 0 when it existed.';

-- Creates the missing month partitions of every history table for the months of [from_day, to_day].
CREATE FUNCTION waymark_prepare_history_partitions(from_day date, to_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    m date := make_date(extract(year FROM from_day)::int, extract(month FROM from_day)::int, 1);
    made integer := 0;
    t text;
BEGIN
    -- Months that retention dropped are not made again (their late rows stay in the default
    -- partitions until the next retention run deletes them).
    m := greatest(m, (SELECT (h.kept_from AT TIME ZONE 'UTC')::date FROM history_horizon h));
    WHILE m <= to_day LOOP
        FOR t IN SELECT table_name FROM waymark_history_tables() LOOP
            made := made + waymark_history_partition(t, m);
        END LOOP;
        m := (m + interval '1 month')::date;
    END LOOP;
    RETURN made;
END $$;
COMMENT ON FUNCTION waymark_prepare_history_partitions(date, date) IS 'Creates the missing monthly partitions of region_events, visits and transitions for the UTC months from from_day to to_day, none before the retention horizon (history_horizon), moving rows of those months out of the default partitions; returns how many it created.';

-- Retention: everything before the UTC month that contains keep_from goes.
CREATE FUNCTION waymark_drop_history_partitions(keep_from date, OUT partitions integer, OUT journeys bigint, OUT late_rows bigint)
LANGUAGE plpgsql AS $$
DECLARE
    keep_month date := make_date(extract(year FROM keep_from)::int, extract(month FROM keep_from)::int, 1);
    horizon timestamptz := keep_month::timestamp AT TIME ZONE 'UTC';
    part record;
    t record;
    n bigint;
BEGIN
    partitions := 0;
    journeys := 0;
    late_rows := 0;
    -- The report rollups of the hours about to go must be final: refresh them first if any is
    -- still marked (normally none: only late data for those hours marks them).
    IF to_regclass('report_dirty_hours') IS NOT NULL
       AND EXISTS (SELECT 1 FROM report_dirty_hours WHERE hour < horizon) THEN
        PERFORM waymark_report_refresh(NULL);
    END IF;
    INSERT INTO history_horizon (kept_from) VALUES (horizon)
    ON CONFLICT (singleton) DO UPDATE SET kept_from = excluded.kept_from, dropped_at = now()
        WHERE history_horizon.kept_from < excluded.kept_from;

    FOR part IN
        SELECT c.relname, h.table_name FROM waymark_history_tables() h
        JOIN pg_inherits i ON i.inhparent = h.table_name::regclass
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE c.relname = h.table_name || '_' || substring(c.relname FROM '[0-9]{6}$')
    LOOP
        IF to_date(right(part.relname, 6), 'YYYYMM') < keep_month THEN
            EXECUTE format('DROP TABLE %I', part.relname);
            partitions := partitions + 1;
        END IF;
    END LOOP;
    -- Rows of dropped months that arrived late sit in the default partitions. Deleted there
    -- directly: the report triggers (on the parent tables) do not fire, the rollups keep them.
    FOR t IN SELECT * FROM waymark_history_tables() LOOP
        EXECUTE format('DELETE FROM %I WHERE %I < %L', t.table_name || '_default', t.key_column, horizon);
        GET DIAGNOSTICS n = ROW_COUNT;
        late_rows := late_rows + n;
    END LOOP;
    DELETE FROM journeys j WHERE j.ended_at < horizon;
    GET DIAGNOSTICS journeys = ROW_COUNT;
    -- Entrance sightings (0101) are per-device history too.
    IF to_regclass('entrance_heard') IS NOT NULL THEN
        DELETE FROM entrance_heard e WHERE e.hour < horizon;
    END IF;
END $$;
COMMENT ON FUNCTION waymark_drop_history_partitions(date) IS 'Retention of the history: drops the monthly partitions of region_events, visits and transitions before the UTC month containing keep_from, deletes the rows before it from the default partitions, the journeys that ended before it and the entrance sightings (entrance_heard) before it, and records it in history_horizon. Report rollups of the dropped hours are refreshed first when marked, then kept as they are.';

-- In place conversion of one table (this migration only): see the head of this file.
CREATE FUNCTION pg_temp.waymark_partition_table(p_table text, p_create text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    key text := (SELECT key_column FROM waymark_history_tables() WHERE table_name = p_table);
    old text := p_table || '_unpartitioned';
    indexes text[];
    triggers text[];
    comments text[];
    grants text[];
    r record;
    gr record;
    s text;
    m date;
BEGIN
    -- What the old table carries beyond its definition.
    SELECT array_agg(pg_get_indexdef(i.indexrelid)) INTO indexes
    FROM pg_index i
    WHERE i.indrelid = p_table::regclass
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid);
    SELECT array_agg(pg_get_triggerdef(g.oid)) INTO triggers
    FROM pg_trigger g WHERE g.tgrelid = p_table::regclass AND NOT g.tgisinternal;
    SELECT array_agg(format('COMMENT ON COLUMN %I.%I IS %L', p_table, a.attname, d.description)) INTO comments
    FROM pg_attribute a JOIN pg_description d ON d.objoid = a.attrelid AND d.objsubid = a.attnum AND d.classoid = 'pg_class'::regclass
    WHERE a.attrelid = p_table::regclass AND a.attnum > 0 AND NOT a.attisdropped;
    comments := coalesce(comments, '{}') || ARRAY(
        SELECT format('COMMENT ON TABLE %I IS %L', p_table, obj_description(p_table::regclass, 'pg_class'))
        WHERE obj_description(p_table::regclass, 'pg_class') IS NOT NULL);
    SELECT array_agg(format('GRANT %s ON %I TO %s', x.privilege_type, p_table,
                            CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END)
                     || CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END) INTO grants
    FROM pg_class c, aclexplode(c.relacl) x
    WHERE c.oid = p_table::regclass AND x.grantee <> c.relowner;

    -- The old table and everything named after it move aside.
    EXECUTE format('ALTER TABLE %I RENAME TO %I', p_table, old);
    FOR r IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = old::regclass LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, left(r.relname, 40) || '_unpartitioned');
    END LOOP;
    FOR r IN SELECT c.conname FROM pg_constraint c WHERE c.conrelid = old::regclass AND c.conname !~ '_unpartitioned$' LOOP
        EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', old, r.conname, left(r.conname, 40) || '_unpartitioned');
    END LOOP;
    FOR r IN SELECT c.relname FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
             WHERE d.refobjid = old::regclass AND d.classid = 'pg_class'::regclass AND c.relkind = 'S' LOOP
        EXECUTE format('ALTER SEQUENCE %I RENAME TO %I', r.relname, left(r.relname, 40) || '_unpartitioned');
    END LOOP;

    -- The partitioned table, its default partition and a month partition for each month of the old rows.
    EXECUTE p_create;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', p_table || '_default', p_table);
    FOR m IN EXECUTE format('SELECT DISTINCT (date_trunc(''month'', %I, ''UTC'') AT TIME ZONE ''UTC'')::date FROM %I', key, old) LOOP
        PERFORM waymark_history_partition(p_table, m);
    END LOOP;
    EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM %I', p_table, old);
    -- Identity columns continue after the old sequence.
    FOR r IN SELECT a.attname, o.relname AS old_seq FROM pg_attribute a
             JOIN pg_depend d ON d.refobjid = old::regclass AND d.refobjsubid = a.attnum AND d.classid = 'pg_class'::regclass
             JOIN pg_class o ON o.oid = d.objid AND o.relkind = 'S'
             WHERE a.attrelid = p_table::regclass AND a.attidentity <> '' LOOP
        s := pg_get_serial_sequence(p_table, r.attname);
        EXECUTE format('SELECT setval(%L, last_value, is_called) FROM %I', s, r.old_seq);
        FOR gr IN SELECT format('GRANT %s ON SEQUENCE %s TO %s', x.privilege_type, s,
                               CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END) AS g
                 FROM pg_class c, aclexplode(c.relacl) x WHERE c.oid = r.old_seq::regclass AND x.grantee <> c.relowner LOOP
            EXECUTE gr.g;
        END LOOP;
    END LOOP;

    FOREACH s IN ARRAY coalesce(indexes, '{}') || coalesce(triggers, '{}') || comments || coalesce(grants, '{}') LOOP
        EXECUTE s;
    END LOOP;
    EXECUTE format('DROP TABLE %I', old);
    EXECUTE format('ANALYZE %I', p_table);
END $$;

SELECT pg_temp.waymark_partition_table('region_events', $sql$
CREATE TABLE region_events (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id    text NOT NULL,
    at           timestamptz NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('enter', 'exit', 'unknown', 'region_change')),
    region_id    text,
    proximity    text CHECK (proximity IN ('immediate', 'near', 'far', 'unknown')),
    distance_m   real,
    seq          bigint GENERATED ALWAYS AS IDENTITY
) PARTITION BY RANGE (at)
$sql$);

SELECT pg_temp.waymark_partition_table('visits', $sql$
CREATE TABLE visits (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id    text NOT NULL,
    region_id    text NOT NULL,
    entered_at   timestamptz NOT NULL,
    exited_at    timestamptz NOT NULL,
    dwell_s      double precision NOT NULL,
    inferred     boolean NOT NULL DEFAULT false,
    journey_id   bigint REFERENCES journeys ON DELETE SET NULL,
    PRIMARY KEY (site_id, device_id, region_id, entered_at)
) PARTITION BY RANGE (entered_at)
$sql$);

SELECT pg_temp.waymark_partition_table('transitions', $sql$
CREATE TABLE transitions (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id    text NOT NULL,
    from_region  text NOT NULL,
    to_region    text NOT NULL,
    at           timestamptz NOT NULL,
    inferred     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (site_id, device_id, at, from_region, to_region)
) PARTITION BY RANGE (at)
$sql$);

DROP FUNCTION pg_temp.waymark_partition_table(text, text);

COMMENT ON TABLE region_events IS 'Region state changes (enter = inside, exit = outside, unknown) and current-region changes, as published on …/events. Partitioned by UTC month of at (region_events_YYYYMM; region_events_default takes the rest).';
COMMENT ON TABLE visits IS 'A device''s stay in one region: one row per completed visit (DESIGN.md §3). Partitioned by UTC month of entered_at (visits_YYYYMM; visits_default takes the rest).';
COMMENT ON TABLE transitions IS 'A device moving from one region to the next (transition matrix, traffic patterns); one row per step of an inferred path. Partitioned by UTC month of at (transitions_YYYYMM; transitions_default takes the rest).';

-- This month and the next two exist from the start (the aggregator keeps that going).
SELECT waymark_prepare_history_partitions(current_date, (current_date + interval '2 months')::date);

-- The upkeep runs with the schema owner's rights, as the raw-sighting upkeep (0006): the ingest
-- role may neither create nor drop tables.
ALTER FUNCTION waymark_history_partition(text, date) SECURITY DEFINER SET search_path = public SET TimeZone = 'UTC';
ALTER FUNCTION waymark_prepare_history_partitions(date, date) SECURITY DEFINER SET search_path = public SET TimeZone = 'UTC';
ALTER FUNCTION waymark_drop_history_partitions(date) SECURITY DEFINER SET search_path = public SET TimeZone = 'UTC';
REVOKE ALL ON FUNCTION waymark_history_partition(text, date) FROM PUBLIC;
REVOKE ALL ON FUNCTION waymark_prepare_history_partitions(date, date) FROM PUBLIC;
REVOKE ALL ON FUNCTION waymark_drop_history_partitions(date) FROM PUBLIC;

DO $$
DECLARE
    r text;
BEGIN
    FOR r IN
        SELECT rolname FROM pg_roles
         WHERE rolname = 'waymark_ingest'
            OR (rolname !~ '^pg_' AND rolname <> current_user
                AND has_table_privilege(oid, 'visits', 'INSERT')
                AND NOT rolsuper)
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION waymark_prepare_history_partitions(date, date) TO %I', r);
        EXECUTE format('GRANT EXECUTE ON FUNCTION waymark_drop_history_partitions(date) TO %I', r);
    END LOOP;
END $$;
