import Foundation
import Testing
import WaymarkPostgres

/// The PostgreSQL server that scripts/test.sh starts, and a fresh database per test on it.
///
/// Without `WAYMARK_DATABASE_URL` the suites that need it are disabled, unless
/// `WAYMARK_TEST_REQUIRE_SERVICES=1` (set by scripts/test.sh and CI): then they run and fail.
enum PostgresTestServer {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }
    static var url: String? { environment["WAYMARK_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 } }
    static var required: Bool { environment["WAYMARK_TEST_REQUIRE_SERVICES"] == "1" }
    /// For `.enabled(if:)`: run when the server is there, or when its absence must fail.
    static var shouldRun: Bool { url != nil || required }

    /// The server's URL, or a test failure explaining how to get one.
    static func requireURL() throws -> String {
        try #require(url, "WAYMARK_DATABASE_URL is not set: run the tests with scripts/test.sh, which starts PostgreSQL")
    }

    /// `url` with its database path replaced by `database`.
    static func url(_ base: String, database: String) -> String {
        guard let scheme = base.range(of: "://") else { return base }
        let rest = base[scheme.upperBound...]
        let slash = rest.firstIndex(of: "/")
        let query = rest.firstIndex(of: "?")
        let head = base[..<(slash ?? query ?? base.endIndex)]
        let tail = query.map { String(base[$0...]) } ?? ""
        return "\(head)/\(database)\(tail)"
    }
}

/// A database created for one test and dropped again by `drop()`.
struct PostgresTestDatabase {
    let name: String
    let url: String
    private let adminURL: String

    /// Creates `wm_<label>_<random>` on the test server.
    init(_ label: String) throws {
        adminURL = try PostgresTestServer.requireURL()
        let safe = label.lowercased().filter { $0.isLetter || $0.isNumber }
        name = "wm_\(safe.prefix(30))_\(UInt32.random(in: 0...UInt32.max))"
        url = PostgresTestServer.url(adminURL, database: name)
        let admin = try PostgresConnection(url: adminURL)
        try admin.execute("CREATE DATABASE \(name)")
    }

    func connect() throws -> PostgresConnection { try PostgresConnection(url: url) }

    /// Drops the database, ending any sessions still connected to it.
    func drop() {
        guard let admin = try? PostgresConnection(url: adminURL) else { return }
        try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}
