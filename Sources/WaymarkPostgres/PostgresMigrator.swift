import Foundation

/// Applies versioned SQL migrations (`schema/NNNN_name.sql`) in order, each once, each in its own
/// transaction together with its row in `waymark_migrations`.
///
/// - Files are named `<version>_<name>.sql` with a decimal version (`0001_sites.sql`); versions
///   must be unique. Core tables use 0001–0099, reports 0100 and up.
/// - Re-running is a no-op. A file whose content changed after it was applied is an error (add a
///   new migration instead), so every database built from the same files has the same schema.
/// - A session-level advisory lock serialises concurrent migrators against one database.
public struct PostgresMigrator: Sendable {
    public struct Migration: Sendable, Hashable {
        public var version: Int
        public var name: String
        public var sql: String

        public init(version: Int, name: String, sql: String) {
            self.version = version
            self.name = name
            self.sql = sql
        }

        /// FNV-1a 64 of the file's bytes, hex.
        public var checksum: String { PostgresMigrator.checksum(sql) }
    }

    public let migrations: [Migration]

    public init(migrations: [Migration]) throws {
        var seen: [Int: String] = [:]
        for m in migrations {
            if let other = seen[m.version] {
                throw PostgresError(kind: .usage, operation: "load migrations",
                                    message: "version \(m.version) is used by both '\(other)' and '\(m.name)'",
                                    hint: "give each migration file its own number")
            }
            seen[m.version] = m.name
        }
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Loads every `NNNN_name.sql` in `directory`; other files are ignored.
    public init(directory: String) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw PostgresError(kind: .usage, operation: "load migrations", message: "cannot read the directory \(directory)",
                                hint: "pass --schema DIR (the repository's schema/ folder) or set WAYMARK_SCHEMA_DIR")
        }
        var found: [Migration] = []
        for file in names.sorted() where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else { continue }
            let path = (directory as NSString).appendingPathComponent(file)
            guard let sql = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw PostgresError(kind: .usage, operation: "load migrations", message: "cannot read \(path) as UTF-8")
            }
            found.append(Migration(version: version, name: String(stem), sql: sql))
        }
        if found.isEmpty {
            throw PostgresError(kind: .usage, operation: "load migrations", message: "no NNNN_name.sql files in \(directory)",
                                hint: "point --schema at the repository's schema/ folder")
        }
        try self.init(migrations: found)
    }

    /// What `migrate` did: the migrations it applied now and those that were applied before.
    public struct Outcome: Sendable {
        public var applied: [Migration]
        public var alreadyApplied: [Migration]
    }

    /// Applies the pending migrations. Throws on the first failure; the failing migration is rolled
    /// back, earlier ones stay applied.
    @discardableResult
    public func migrate(_ db: PostgresConnection) throws -> Outcome {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS waymark_migrations (
                version     integer PRIMARY KEY,
                name        text NOT NULL,
                checksum    text NOT NULL,
                applied_at  timestamptz NOT NULL DEFAULT now()
            );
            COMMENT ON TABLE waymark_migrations IS 'Schema migrations applied by `waymark db migrate` (files schema/NNNN_name.sql).';
            COMMENT ON COLUMN waymark_migrations.version IS 'The file''s number.';
            COMMENT ON COLUMN waymark_migrations.name IS 'The file name without .sql.';
            COMMENT ON COLUMN waymark_migrations.checksum IS 'FNV-1a 64 of the file when applied; a changed file is refused.';
            COMMENT ON COLUMN waymark_migrations.applied_at IS 'When it was applied.';
            """)
        try db.query("SELECT pg_advisory_lock($1)", [Self.lockKey])
        defer { _ = try? db.query("SELECT pg_advisory_unlock($1)", [Self.lockKey]) }
        var done: [Int: String] = [:]
        for row in try db.query("SELECT version, checksum FROM waymark_migrations").rows {
            done[try row.int(0)] = try row.string(1)
        }
        var outcome = Outcome(applied: [], alreadyApplied: [])
        for m in migrations {
            if let checksum = done[m.version] {
                guard checksum == m.checksum else {
                    throw PostgresError(kind: .usage, operation: "migrate \(m.name)",
                                        message: "the file changed after it was applied to this database",
                                        hint: "restore the original file and put the change in a new migration with a higher number")
                }
                outcome.alreadyApplied.append(m)
                continue
            }
            // Roles are cluster-wide and the advisory lock above is per database: when two databases
            // of one cluster are migrated at once, both may find `waymark_report` missing and one
            // CREATE ROLE then fails (23505 on pg_authid, or 42710). The transaction rolled back;
            // run it once more, now that the role exists.
            var attempt = 0
            while true {
                attempt += 1
                do {
                    try db.transaction { tx in
                        try tx.execute(m.sql)
                        try tx.query("INSERT INTO waymark_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                                     [m.version, m.name, m.checksum])
                    }
                    break
                } catch var error as PostgresError {
                    if attempt == 1, let state = error.sqlState, state == "23505" || state == "42710" { continue }
                    error.operation = "migrate \(m.name)"
                    throw error
                }
            }
            outcome.applied.append(m)
        }
        return outcome
    }

    /// Versions recorded in `waymark_migrations` (empty when the table does not exist).
    public static func appliedVersions(_ db: PostgresConnection) throws -> [Int] {
        let exists = try db.query("SELECT to_regclass('waymark_migrations') IS NOT NULL").first?.bool(0) ?? false
        guard exists else { return [] }
        return try db.query("SELECT version FROM waymark_migrations ORDER BY version").rows.map { try $0.int(0) }
    }

    static let lockKey: Int64 = 0x5741_594D_4152_4B31  // "WAYMARK1"

    static func checksum(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
