import ArgumentParser
import Foundation
import WaymarkPostgres

/// `waymark db …`: database administration.
struct DBCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Manage the PostgreSQL database.", subcommands: [Migrate.self])

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply the schema migrations (schema/NNNN_name.sql) that this database does not have yet.",
            discussion: """
                Each migration runs once, in its own transaction, and is recorded in the table \
                waymark_migrations; running the command again changes nothing. A migration file that \
                was edited after it was applied is refused.
                """)

        @Option(help: ArgumentHelp("PostgreSQL URL, e.g. postgresql://waymark@localhost:5432/waymark (default: $WAYMARK_DATABASE_URL, else the libpq PG* environment).",
                                   valueName: "url"))
        var database: String?

        @Option(help: ArgumentHelp("Folder with the migration files (default: $WAYMARK_SCHEMA_DIR, ./schema, the schema/ folder of the source tree this program was built in, /usr/share/waymark/schema).",
                                   valueName: "dir"))
        var schema: String?

        func run() throws {
            let url = database ?? ProcessInfo.processInfo.environment["WAYMARK_DATABASE_URL"] ?? ""
            do {
                let directory = try schema ?? Self.defaultSchemaDirectory()
                let migrator = try PostgresMigrator(directory: directory)
                let db = try PostgresConnection(url: url)
                defer { db.close() }
                let outcome = try migrator.migrate(db)
                for m in outcome.applied { print("applied \(m.name)") }
                let latest = migrator.migrations.last.map { "\($0.version)" } ?? "none"
                print("\(db.maskedURL): \(outcome.applied.count) migration\(outcome.applied.count == 1 ? "" : "s") applied, \(outcome.alreadyApplied.count) already present; schema at version \(latest)")
            } catch let error as PostgresError {
                printError("waymark db migrate: \(error)")
                throw ExitCode(1)
            }
        }

        /// The first folder that holds `0001_*.sql` among the documented defaults.
        static func defaultSchemaDirectory() throws -> String {
            var candidates: [String] = []
            if let env = ProcessInfo.processInfo.environment["WAYMARK_SCHEMA_DIR"], !env.isEmpty { candidates.append(env) }
            candidates.append(FileManager.default.currentDirectoryPath + "/schema")
            // The source tree: this file is Sources/waymark/Commands/DBCommand.swift.
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("schema").path
            candidates.append(source)
            candidates.append("/usr/share/waymark/schema")
            for dir in candidates {
                let files = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
                if files.contains(where: { $0.hasPrefix("0001_") && $0.hasSuffix(".sql") }) { return dir }
            }
            throw PostgresError(kind: .usage, operation: "find the schema", message: "no migration files in \(candidates.joined(separator: ", "))",
                                hint: "pass --schema DIR pointing at the repository's schema/ folder")
        }
    }
}
