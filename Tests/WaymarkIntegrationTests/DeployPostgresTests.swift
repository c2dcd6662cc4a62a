import Foundation
import Testing

/// deploy/postgres/bootstrap.sh on a real PostgreSQL: the roles get exactly the rights the
/// operator guide promises (see `DeployDatabase`).
@Suite("Deploy: PostgreSQL bootstrap and roles", .serialized, .enabled(if: DeployEnvironment.databaseSuiteRuns))
struct DeployPostgresTests {
    /// What a migration run as the owner creates: a table with a sequence-backed key.
    static let table = "CREATE TABLE visits (id bigserial PRIMARY KEY, region text NOT NULL, dwell_s integer)"

    @Test("bootstrap creates the database and three plain login roles, and can run again")
    func rolesAndDatabase() throws {
        let db = try DeployDatabase.bootstrap()
        defer { db.drop() }
        let again = try db.runBootstrap()
        #expect(again.status == 0, "a second run must succeed: \(again)")

        let roles = try db.psqlAdmin("""
            SELECT string_agg(format('%s super=%s createdb=%s createrole=%s login=%s', rolname, rolsuper, rolcreatedb,
                                     rolcreaterole, rolcanlogin), ';' ORDER BY rolname)
              FROM pg_roles WHERE rolname LIKE '\(db.name)\\_%'
            """)
        #expect(roles.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == [db.ingest, db.owner, db.report]
            .map { "\($0) super=f createdb=f createrole=f login=t" }.joined(separator: ";"), "\(roles)")
        let owner = try db.psqlAdmin("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()")
        #expect(owner.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == db.owner)
        // PUBLIC has no rights on the database: a role that is not one of the three cannot connect.
        let stranger = db.name + "_stranger"
        _ = try db.psqlAdmin("CREATE ROLE \(stranger) LOGIN")
        defer { _ = try? db.psqlAdmin("DROP ROLE IF EXISTS \(stranger)") }
        try db.refused(stranger, "SELECT 1", "permission denied for database")
    }

    @Test("the report role can SELECT but not INSERT, UPDATE, DELETE, TRUNCATE or CREATE")
    func reportRoleIsReadOnly() throws {
        let db = try DeployDatabase.bootstrap()
        defer { db.drop() }
        try db.allowed(db.owner, Self.table)  // after the bootstrap: default privileges apply
        try db.allowed(db.ingest, "INSERT INTO visits (region, dwell_s) VALUES ('hall-a', 600)")

        #expect(try db.allowed(db.report, "SELECT region, dwell_s FROM visits") == "hall-a|600")
        try db.refused(db.report, "INSERT INTO visits (region) VALUES ('x')", "permission denied for table visits")
        try db.refused(db.report, "UPDATE visits SET dwell_s = 0", "permission denied for table visits")
        try db.refused(db.report, "DELETE FROM visits", "permission denied for table visits")
        try db.refused(db.report, "TRUNCATE visits", "permission denied for table visits")
        try db.refused(db.report, "SELECT nextval('visits_id_seq')", "permission denied for sequence visits_id_seq")
        try db.refused(db.report, "CREATE TABLE mine (x int)", "permission denied for schema public")
        try db.refused(db.report, "CREATE TEMP TABLE mine (x int)", "permission denied to create temporary tables")
        try db.refused(db.report, "DROP TABLE visits", "must be owner of table visits")
        #expect(try db.allowed(db.owner, "SELECT count(*) FROM visits WHERE dwell_s = 600") == "1", "nothing changed")
    }

    @Test("the ingest role can write rows (also with COPY) but not drop, alter, truncate or create tables")
    func ingestRoleWritesRowsOnly() throws {
        let db = try DeployDatabase.bootstrap()
        defer { db.drop() }
        try db.allowed(db.owner, Self.table)

        #expect(try db.allowed(db.ingest, "INSERT INTO visits (region, dwell_s) VALUES ('lobby', 60) RETURNING id") == "1")
        try db.allowed(db.ingest, "UPDATE visits SET dwell_s = 90 WHERE id = 1")
        try db.allowed(db.ingest, "COPY visits (region, dwell_s) FROM STDIN", stdin: "hall-a\t300\nhall-b\t1200\n")
        try db.allowed(db.ingest, "DELETE FROM visits WHERE region = 'hall-b'")
        try db.allowed(db.ingest, "CREATE TEMP TABLE staging (LIKE visits)")  // COPY staging in a session
        #expect(try db.allowed(db.report, "SELECT string_agg(region || ':' || dwell_s, ',' ORDER BY id) FROM visits") == "lobby:90,hall-a:300")

        try db.refused(db.ingest, "DROP TABLE visits", "must be owner of table visits")
        try db.refused(db.ingest, "ALTER TABLE visits ADD COLUMN x int", "must be owner of table visits")
        try db.refused(db.ingest, "TRUNCATE visits", "permission denied for table visits")
        try db.refused(db.ingest, "CREATE TABLE mine (x int)", "permission denied for schema public")
        try db.refused(db.ingest, "CREATE DATABASE \(db.name)_other", "permission denied to create database")
    }

    @Test("grants reach tables from earlier migrations too, and foreign-owned tables are reported")
    func grantsOnExistingTables() throws {
        let db = try DeployDatabase.bootstrap()
        defer { db.drop() }
        try db.allowed(db.owner, Self.table)
        // A table the owner made, with its default grants revoked (as if created before the bootstrap)...
        try db.allowed(db.owner, "CREATE TABLE regions (id text PRIMARY KEY)")
        try db.allowed(db.owner, "REVOKE ALL ON regions FROM \(db.ingest), \(db.report)")
        try db.refused(db.report, "SELECT * FROM regions", "permission denied for table regions")
        // ...and one made by a superuser, which default privileges never cover.
        _ = try db.psqlAdmin("CREATE TABLE stray (x int)")

        let rerun = try db.runBootstrap()
        #expect(rerun.status == 0, "\(rerun)")
        try db.allowed(db.report, "SELECT * FROM regions")
        try db.allowed(db.ingest, "INSERT INTO regions VALUES ('hall-a')")
        #expect(rerun.stdout.contains("warning: table stray is owned by"), "\(rerun)")
        #expect(rerun.stdout.contains("ALTER TABLE stray OWNER TO \(db.owner);"), "\(rerun)")
    }

    /// Applies schema/*.sql in order as the owner role, as `waymark db migrate` does in production.
    /// The report migration names the role waymark_report; roles are cluster-wide, so this
    /// database's prefixed report role stands in for it.
    static func migrate(_ db: DeployDatabase) throws {
        let schema = DeployEnvironment.repositoryRoot.appendingPathComponent("schema")
        let files = try FileManager.default.contentsOfDirectory(atPath: schema.path).filter { $0.hasSuffix(".sql") }.sorted()
        try #require(!files.isEmpty, "no migrations in \(schema.path)")
        for file in files {
            let sql = try String(contentsOf: schema.appendingPathComponent(file), encoding: .utf8)
                .replacingOccurrences(of: "waymark_report", with: db.report)
            let applied = try DeployCommand.run("psql", ["-X", "-q", "-1", "-v", "ON_ERROR_STOP=1",
                                                          "postgresql://\(db.owner)@\(db.host):\(db.port)/\(db.name)"], stdin: sql)
            try #require(applied.status == 0, "migration \(file) failed as the owner role: \(applied)")
        }
    }

    @Test("after the real schema/ migrations run as the owner, ingest may write and report only read every table")
    func realMigrations() throws {
        let db = try DeployDatabase.bootstrap()
        defer { db.drop() }
        try Self.migrate(db)
        // Every table: ingest has SELECT/INSERT/UPDATE/DELETE and no TRUNCATE; report has SELECT only.
        let wrong = try db.psqlAdmin("""
            SELECT string_agg(c.relname, ', ' ORDER BY c.relname) FROM pg_class c
              JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
               AND NOT (has_table_privilege('\(db.ingest)', c.oid, 'SELECT')
                        AND has_table_privilege('\(db.ingest)', c.oid, 'INSERT')
                        AND has_table_privilege('\(db.ingest)', c.oid, 'UPDATE')
                        AND has_table_privilege('\(db.ingest)', c.oid, 'DELETE')
                        AND NOT has_table_privilege('\(db.ingest)', c.oid, 'TRUNCATE')
                        AND has_table_privilege('\(db.report)', c.oid, 'SELECT')
                        -- with a list, has_table_privilege is true when any one is held
                        AND NOT has_table_privilege('\(db.report)', c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))
            """)
        #expect(wrong.status == 0 && wrong.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
                "tables with the wrong grants: \(wrong.stdout) \(wrong.stderr)")
        let tables = try db.psqlAdmin("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        #expect((Int(tables.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 5, "\(tables)")
    }

    @Test("the aggregator's raw-sighting partition upkeep works as the ingest role")
    func partitionUpkeepAsIngest() throws {
        let db = try DeployDatabase.bootstrap()
        defer { db.drop() }
        try Self.migrate(db)
        try db.allowed(db.owner, "SELECT waymark_prepare_sighting_partitions(current_date - 40, current_date - 40)")
        try db.allowed(db.ingest, "SELECT waymark_prepare_sighting_partitions(current_date, current_date + 1)")
        try db.allowed(db.ingest, "SELECT waymark_drop_sighting_partitions(current_date - 30)")
        try db.refused(db.report, "SELECT waymark_drop_sighting_partitions(current_date - 30)", "permission denied")
    }

    @Test("the history partition upkeep and retention (schema 0011) work as the ingest role, not as the report role")
    func historyUpkeepAsIngest() throws {
        let db = try DeployDatabase.bootstrap()
        defer { db.drop() }
        try Self.migrate(db)
        try db.allowed(db.ingest, "SELECT waymark_prepare_history_partitions(current_date - 400, current_date + 40)")
        try db.allowed(db.ingest, "INSERT INTO sites (site_id) VALUES ('s')")
        try db.allowed(db.ingest, """
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s)
            VALUES ('s', 'd', 'r', now() - interval '300 days', now() - interval '300 days' + interval '1 minute', 60)
            """)
        try db.allowed(db.ingest, "SELECT * FROM waymark_drop_history_partitions(current_date - 100)")
        let left = try db.psqlAdmin("SELECT count(*) FROM visits")
        #expect(left.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(left)")
        try db.refused(db.report, "SELECT waymark_prepare_history_partitions(current_date, current_date)", "permission denied")
        try db.refused(db.report, "SELECT * FROM waymark_drop_history_partitions(current_date - 100)", "permission denied")
        try db.refused(db.ingest, "SELECT waymark_history_partition('visits', date_trunc('month', current_date)::date)", "permission denied")
    }
}
