-- Waymark core schema, part 6: the raw-sighting partition upkeep functions of part 4 run with the
-- schema owner's rights, so the aggregator's ingest role (which may not CREATE in schema public
-- nor DROP the owner's tables) can prepare and retire daily partitions. search_path is pinned so
-- a caller cannot substitute its own objects (new partitions go to public; pg_catalog is always searched first). Only roles allowed to write raw sightings may call
-- them: waymark_ingest when it exists, and any role that already holds INSERT on sightings
-- (deploy/postgres/bootstrap.sql grants that to the ingest role, whatever its name).

ALTER FUNCTION waymark_prepare_sighting_partitions(date, date)
    SECURITY DEFINER SET search_path = public;
ALTER FUNCTION waymark_drop_sighting_partitions(date)
    SECURITY DEFINER SET search_path = public;

REVOKE ALL ON FUNCTION waymark_prepare_sighting_partitions(date, date) FROM PUBLIC;
REVOKE ALL ON FUNCTION waymark_drop_sighting_partitions(date) FROM PUBLIC;

DO $$
DECLARE
    r text;
BEGIN
    FOR r IN
        SELECT rolname FROM pg_roles
         WHERE rolname = 'waymark_ingest'
            OR (rolname !~ '^pg_' AND rolname <> current_user
                AND has_table_privilege(oid, 'sightings', 'INSERT')
                AND NOT rolsuper)
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION waymark_prepare_sighting_partitions(date, date) TO %I', r);
        EXECUTE format('GRANT EXECUTE ON FUNCTION waymark_drop_sighting_partitions(date) TO %I', r);
    END LOOP;
END $$;

COMMENT ON FUNCTION waymark_prepare_sighting_partitions(date, date) IS 'Creates the missing daily partitions sightings_YYYYMMDD for the given days (UTC); runs with the schema owner''s rights.';
COMMENT ON FUNCTION waymark_drop_sighting_partitions(date) IS 'Retention: drops the daily sighting partitions of days before keep_from; runs with the schema owner''s rights.';
