import WaymarkPostgres

/// Bulk loading for the reports benchmark: the big tables are filled with their indexes and
/// constraints dropped, and both are rebuilt afterwards (one sort per index instead of millions of
/// random B-tree insertions and per-row foreign-key checks). The report triggers stay enabled, so
/// every loaded hour is marked dirty and the refresh that follows rebuilds it as it would in
/// production.
struct BenchBulkLoad {
    /// The statements that recreate what `dropIndexes` removed, in order (indexes, then constraints).
    private(set) var restore: [String] = []

    /// Drops every index that backs no constraint and every primary key, unique and foreign-key
    /// constraint of `tables`, remembering their definitions; keys that a foreign key references
    /// (the journeys' primary key) stay.
    mutating func dropIndexes(_ db: PostgresConnection, tables: [String]) throws {
        let indexes = try db.query("""
            SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
            FROM pg_index i
            WHERE i.indrelid = ANY ($1::regclass[])
              AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid)
            """, ["{" + tables.joined(separator: ",") + "}"])
        let constraints = try db.query("""
            SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
            FROM pg_constraint c
            WHERE c.conrelid = ANY ($1::regclass[]) AND c.contype IN ('p', 'u', 'f')
              AND NOT EXISTS (SELECT FROM pg_constraint r WHERE r.contype = 'f' AND r.conindid = c.conindid AND c.contype <> 'f')
            ORDER BY c.contype DESC
            """, ["{" + tables.joined(separator: ",") + "}"])
        for row in indexes.rows {
            try db.execute("DROP INDEX \(try row.string(0))")
            // An index of a partitioned table (visits, transitions: schema 0011) is described as
            // `CREATE INDEX … ON ONLY table`, which makes an invalid parent index and none on the
            // partitions; recreated without ONLY it is built on every partition, as the migration made it.
            restore.append(try row.string(1).replacingOccurrences(of: " ON ONLY ", with: " ON "))
        }
        for row in constraints.rows {
            let table = try row.string(0), name = try row.string(1)
            try db.execute("ALTER TABLE \(table) DROP CONSTRAINT \(name)")
            restore.append("ALTER TABLE \(table) ADD CONSTRAINT \(name) \(try row.string(2))")
        }
    }

    /// Recreates the indexes and constraints (with a generous maintenance_work_mem for the sorts),
    /// and fails if any index is left invalid (the refresh would then read whole partitions).
    func rebuild(_ db: PostgresConnection) throws {
        try db.execute("SET maintenance_work_mem = '1GB'")
        for statement in restore { try db.execute(statement) }
        try db.execute("RESET maintenance_work_mem")
        let invalid = try db.query("SELECT string_agg(indexrelid::regclass::text, ', ') FROM pg_index WHERE NOT indisvalid")
        if let names = invalid.first?.text(0) {
            throw BenchBulkLoadError.invalidIndexes(names)
        }
    }
}

enum BenchBulkLoadError: Error, CustomStringConvertible {
    case invalidIndexes(String)
    var description: String {
        switch self { case .invalidIndexes(let names): return "indexes left invalid after the bulk load: \(names)" }
    }
}
