import Foundation
import Testing
import WaymarkPostgres

/// The repository's schema/ folder.
let repositorySchemaDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("schema").path

@Suite("Schema migrations", .enabled(if: PostgresTestServer.shouldRun))
struct PostgresSchemaTests {
    @Test func migrateAppliesOnceAndRecordsEachFile() throws {
        let db = try PostgresTestDatabase("migrate")
        defer { db.drop() }
        let conn = try db.connect()
        let migrator = try PostgresMigrator(directory: repositorySchemaDirectory)
        let first = try migrator.migrate(conn)
        #expect(first.applied.count == migrator.migrations.count)
        #expect(first.applied.first?.name == "0001_sites")
        let second = try migrator.migrate(conn)
        #expect(second.applied.isEmpty)
        #expect(second.alreadyApplied.count == migrator.migrations.count)
        #expect(try PostgresMigrator.appliedVersions(conn) == migrator.migrations.map(\.version))
        for table in ["sites", "gateways", "regions", "region_edges", "devices", "region_events", "visits", "journeys",
                      "transitions", "gateway_progress", "device_state", "aggregator_state", "gateway_status",
                      "gateway_ingest_hourly", "gateway_rejections", "sightings"] {
            #expect(try conn.query("SELECT to_regclass($1) IS NOT NULL", [table]).first?.bool(0) == true, "table \(table)")
        }
    }

    @Test func everyCoreTableAndColumnHasAComment() throws {
        let db = try PostgresTestDatabase("comments")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        let missing = try conn.query("""
            SELECT c.relname || coalesce('.' || a.attname, '')
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
            LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
              AND (a.attname IS NULL AND obj_description(c.oid, 'pg_class') IS NULL
                   OR a.attname IS NOT NULL AND col_description(c.oid, a.attnum) IS NULL
                        AND a.attname NOT IN ('site_id', 'device_id', 'gateway_id', 'region_id'))
            ORDER BY 1
            """).rows.map { try $0.string(0) }
        let tablesWithoutComment = try conn.query("""
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND obj_description(c.oid, 'pg_class') IS NULL
            """).rows.map { try $0.string(0) }
        #expect(tablesWithoutComment.isEmpty)
        // Only the reports' tables (0100+, not this suite's concern) may lack column comments.
        let core = missing.filter { !$0.hasPrefix("rollup") && !$0.hasPrefix("report") }
        #expect(core.isEmpty, "columns without COMMENT: \(core)")
    }

    @Test func aMigrationChangedAfterItWasAppliedIsRefused() throws {
        let db = try PostgresTestDatabase("changed")
        defer { db.drop() }
        let conn = try db.connect()
        let v1 = PostgresMigrator.Migration(version: 1, name: "0001_t", sql: "CREATE TABLE t (a int);")
        try PostgresMigrator(migrations: [v1]).migrate(conn)
        var edited = v1
        edited.sql = "CREATE TABLE t (a int, b int);"
        let error = #expect(throws: PostgresError.self) { try PostgresMigrator(migrations: [edited]).migrate(conn) }
        #expect(error?.description.contains("changed after it was applied") == true)
        // A failing migration leaves no trace and stops the run.
        let bad = PostgresMigrator.Migration(version: 2, name: "0002_bad", sql: "CREATE TABLE u (a int); SELECT * FROM nope;")
        let later = PostgresMigrator.Migration(version: 3, name: "0003_later", sql: "CREATE TABLE w (a int);")
        let failure = #expect(throws: PostgresError.self) { try PostgresMigrator(migrations: [v1, bad, later]).migrate(conn) }
        #expect(failure?.operation == "migrate 0002_bad")
        #expect(try conn.query("SELECT to_regclass('u') IS NULL AND to_regclass('w') IS NULL").first?.bool(0) == true)
        #expect(try PostgresMigrator.appliedVersions(conn) == [1])
        #expect(throws: PostgresError.self) { try PostgresMigrator(migrations: [v1, v1]) }
    }

    @Test func sightingPartitionsAreMadeAndDroppedByDay() throws {
        let db = try PostgresTestDatabase("partitions")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        #expect(try conn.query("SELECT waymark_prepare_sighting_partitions($1::date, $2::date)", ["2026-01-01", "2026-01-03"]).first?.int(0) == 3)
        #expect(try conn.query("SELECT waymark_prepare_sighting_partitions($1::date, $2::date)", ["2026-01-02", "2026-01-04"]).first?.int(0) == 1)
        try conn.copy(into: "sightings", columns: ["site_id", "gateway_id", "boot", "seq", "device_id", "first_at", "last_at",
                                                    "count", "rssi_max", "rssi_mean", "rssi_last", "tx"]) { w in
            try w.row(["s", "g", "b", "1", "mac:aa-bb-cc-dd-ee-ff", "2026-01-01 23:59:59+00", "2026-01-02 00:00:00+00", "3", "-60", "-61", "-62", nil])
            try w.row(["s", "g", "b", "1", "mac:aa-bb-cc-dd-ee-ff", "2026-01-02 00:00:00+00", "2026-01-02 00:00:01+00", "3", "-60", "-61", "-62", "-59"])
            try w.row(["s", "g", "b", "2", "mac:aa-bb-cc-dd-ee-ff", "1970-01-01 00:00:00+00", "1970-01-01 00:00:01+00", "1", "-60", "-60", "-60", nil])
        }
        let perPartition = try conn.query("SELECT tableoid::regclass::text, count(*) FROM sightings GROUP BY 1 ORDER BY 1").rows
            .map { "\(try $0.string(0))=\(try $0.int(1))" }
        #expect(perPartition == ["sightings_20260101=1", "sightings_20260102=1", "sightings_default=1"])
        #expect(try conn.query("SELECT waymark_drop_sighting_partitions($1::date)", ["2026-01-03"]).first?.int(0) == 2)
        #expect(try conn.query("SELECT count(*) FROM sightings").first?.int(0) == 1)
    }
}
