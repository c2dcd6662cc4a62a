import Foundation
import Testing

/// A database and its three roles made by deploy/postgres/bootstrap.sh on the PostgreSQL server
/// that scripts/test.sh starts (superuser URL in WAYMARK_DATABASE_URL).
///
/// Roles are cluster-wide, so each instance uses its own role prefix (`wmdeploy_<random>`) and
/// database of the same name; `drop()` removes both. The test server trusts local TCP
/// connections, so the tests log in as each role without its password.
struct DeployDatabase {
    let host: String
    let port: String
    let adminUser: String
    let name: String
    /// The superuser in the maintenance database.
    var adminURL: String { "postgresql://\(adminUser)@\(host):\(port)/postgres" }
    var owner: String { name + "_owner" }
    var ingest: String { name + "_ingest" }
    var report: String { name + "_report" }

    /// Runs the bootstrap for a fresh database and role prefix.
    static func bootstrap() throws -> DeployDatabase {
        try DeployEnvironment.requireTools(DeployEnvironment.databaseTools)
        let env = DeployEnvironment.environment
        let url = try #require(env["WAYMARK_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 },
                               "WAYMARK_DATABASE_URL is not set: run the tests with scripts/test.sh, which starts PostgreSQL")
        let components = try #require(URLComponents(string: url), "WAYMARK_DATABASE_URL '\(url)' is not a URL")
        let host = env["WAYMARK_PG_HOST"] ?? components.host ?? "127.0.0.1"
        let port = env["WAYMARK_PG_PORT"] ?? components.port.map(String.init) ?? "5432"
        let name = "wmdeploy_" + UUID().uuidString.prefix(8).lowercased()
        let db = DeployDatabase(host: host, port: port, adminUser: components.user ?? "postgres", name: name)
        let result = try db.runBootstrap()
        try #require(result.status == 0, "bootstrap.sh failed: \(result)")
        return db
    }

    /// deploy/postgres/bootstrap.sh for this database and prefix.
    func runBootstrap() throws -> DeployCommandResult {
        try DeployCommand.run(DeployEnvironment.script("deploy/postgres/bootstrap.sh"),
                              ["--admin-url", adminURL, "--database", name, "--role-prefix", name])
    }

    /// psql as `role` in this database; each statement is sent on its own, in one session, and
    /// psql stops at the first error.
    func psql(as role: String, _ statements: String..., stdin: String? = nil) throws -> DeployCommandResult {
        try DeployCommand.run("psql", ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "postgresql://\(role)@\(host):\(port)/\(name)"]
                                  + statements.flatMap { ["-c", $0] }, stdin: stdin)
    }

    /// psql as the server's superuser in this database.
    func psqlAdmin(_ statements: String...) throws -> DeployCommandResult {
        try DeployCommand.run("psql", ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "postgresql://\(adminUser)@\(host):\(port)/\(name)"]
                                  + statements.flatMap { ["-c", $0] })
    }

    /// Expects `statement` to succeed for `role` and returns its output.
    @discardableResult
    func allowed(_ role: String, _ statement: String, stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try psql(as: role, statement, stdin: stdin)
        #expect(result.status == 0, "\(role) should be allowed: \(statement) — \(result)", sourceLocation: sourceLocation)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Expects `statement` to fail for `role` with an error containing `error`.
    func refused(_ role: String, _ statement: String, _ error: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try psql(as: role, statement)
        #expect(result.status != 0 && result.stderr.contains(error),
                "\(role) should be refused with '\(error)': \(statement) — \(result)", sourceLocation: sourceLocation)
    }

    /// Drops the database (ending its sessions) and the three roles.
    func drop() {
        _ = try? DeployCommand.run("psql", ["-X", "-q", adminURL,
                                            "-c", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)",
                                            "-c", "DROP ROLE IF EXISTS \(owner), \(ingest), \(report)"])
    }
}
