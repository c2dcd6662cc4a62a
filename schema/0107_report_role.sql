-- Waymark reports, part 8: the read-only role for reports (DESIGN.md §6). waymark_report may read
-- every table and run the report functions, and nothing else: no INSERT, UPDATE, DELETE or DDL.
-- It may call waymark_report_refresh(), which runs with the schema owner's rights and only
-- rebuilds derived rollups. The role cannot log in; grant it to a login role, for example
--     CREATE ROLE analyst LOGIN PASSWORD '…' IN ROLE waymark_report;
-- Roles are cluster-wide, so it is created only when missing.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'waymark_report') THEN
        CREATE ROLE waymark_report NOLOGIN;
    END IF;
END $$;

GRANT USAGE ON SCHEMA public TO waymark_report;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO waymark_report;
REVOKE ALL ON FUNCTION waymark_report_refresh(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION waymark_report_refresh(text) TO waymark_report;
GRANT EXECUTE ON FUNCTION
    waymark_report_traffic(text, timestamptz, timestamptz, text, text),
    waymark_report_dwell(text, timestamptz, timestamptz, text, text),
    waymark_report_occupancy(text, timestamptz, timestamptz, text, text),
    waymark_report_transitions(text, timestamptz, timestamptz, text, text),
    waymark_report_paths(text, timestamptz, timestamptz, text, text, integer),
    waymark_report_capture(text, timestamptz, timestamptz, text, text),
    waymark_report_loyalty(text, timestamptz, timestamptz, text, text),
    waymark_report_heatmap(text, timestamptz, timestamptz, text, text),
    waymark_report_gateways(text, timestamptz, timestamptz, text, text)
    TO waymark_report;
-- Tables created by later migrations become readable too.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO waymark_report;
