import Foundation
import Testing
import WaymarkPostgres

@Suite("PostgresConnection against the test server", .enabled(if: PostgresTestServer.shouldRun))
struct PostgresConnectionTests {
    @Test func parametersAreBoundNotSpliced() throws {
        let db = try PostgresTestDatabase("params")
        defer { db.drop() }
        let conn = try db.connect()
        try conn.execute("CREATE TABLE t (name text, n bigint, x double precision, ok boolean, tags text[])")
        let hostile = "x'); DROP TABLE t; --\t\"\\"
        try conn.query("INSERT INTO t VALUES ($1, $2, $3, $4, $5)",
                       [hostile, Int64(1) << 40, 2.5, true, ["a,b", "c\"d", "e\\f"]])
        try conn.query("INSERT INTO t VALUES ($1, $2, $3, $4, $5)", [nil, nil, nil, nil, nil])
        let rows = try conn.query("SELECT name, n, x, ok, tags FROM t ORDER BY name NULLS LAST").rows
        #expect(rows.count == 2)
        #expect(try rows[0].string(0) == hostile)
        #expect(try rows[0].decode(Int64.self, "n") == 1 << 40)
        #expect(try rows[0].double(2) == 2.5)
        #expect(try rows[0].bool(3))
        #expect(try rows[0].decode([String].self, "tags") == ["a,b", "c\"d", "e\\f"])
        #expect(try rows[1].decode(String?.self, 0) == nil)
        #expect(try rows[1].decode(Double?.self, "x") == nil)
        // NULL read as a non-optional names the column.
        let error = #expect(throws: PostgresError.self) { try rows[1].int(1) }
        #expect(error?.kind == .decoding)
        #expect(error?.description.contains("'n'") == true)
    }

    @Test func serverErrorsCarrySQLStateAndHint() throws {
        let db = try PostgresTestDatabase("errors")
        defer { db.drop() }
        let conn = try db.connect()
        let missing = #expect(throws: PostgresError.self) { try conn.query("SELECT * FROM no_such_table") }
        #expect(missing?.sqlState == "42P01")
        #expect(missing?.kind == .server)
        #expect(missing?.hint?.contains("waymark db migrate") == true)
        try conn.execute("CREATE TABLE u (k int PRIMARY KEY)")
        try conn.query("INSERT INTO u VALUES ($1)", [1])
        let duplicate = #expect(throws: PostgresError.self) { try conn.query("INSERT INTO u VALUES ($1)", [1]) }
        #expect(duplicate?.sqlState == "23505")
        #expect(duplicate?.isConnectionFailure == false)
        // The connection stays usable after an error.
        #expect(try conn.query("SELECT count(*) FROM u").first?.int(0) == 1)
    }

    @Test func transactionCommitsOrRollsBack() throws {
        let db = try PostgresTestDatabase("tx")
        defer { db.drop() }
        let conn = try db.connect()
        try conn.execute("CREATE TABLE v (k int PRIMARY KEY)")
        try conn.transaction { c in
            try c.query("INSERT INTO v VALUES ($1)", [1])
            try c.query("INSERT INTO v VALUES ($1)", [2])
        }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try conn.transaction { c in
                try c.query("INSERT INTO v VALUES ($1)", [3])
                throw Abort()
            }
        }
        #expect(throws: PostgresError.self) {
            try conn.transaction { c in
                try c.query("INSERT INTO v VALUES ($1)", [4])
                try c.query("INSERT INTO v VALUES ($1)", [1])  // duplicate: the whole transaction goes
            }
        }
        let keys = try conn.query("SELECT k FROM v ORDER BY k").rows.map { try $0.int(0) }
        #expect(keys == [1, 2])
    }

    @Test(arguments: [PostgresCopyFormat.text, .csv])
    func copyRoundTripsAwkwardValues(format: PostgresCopyFormat) throws {
        let db = try PostgresTestDatabase("copy")
        defer { db.drop() }
        let conn = try db.connect()
        try conn.execute("CREATE TABLE c (i int, s text)")
        let awkward: [String?] = ["plain", "tab\there", "new\nline", "cr\rx", "back\\slash", "\\N", "\\.",
                                  "comma, \"quoted\"", "", nil, "ünïcødé ✓"]
        let stored = try conn.copy(into: "c", columns: ["i", "s"], format: format) { w in
            for (i, s) in awkward.enumerated() { try w.row([String(i), s]) }
            for i in awkward.count..<5000 { try w.row([String(i), "row \(i)"]) }
        }
        #expect(stored == 5000)
        let rows = try conn.query("SELECT s FROM c WHERE i < $1 ORDER BY i", [awkward.count]).rows
        #expect(try rows.map { try $0.decode(String?.self, 0) } == awkward)
    }

    @Test func failedCopyStoresNothingAndKeepsTheConnection() throws {
        let db = try PostgresTestDatabase("copyfail")
        defer { db.drop() }
        let conn = try db.connect()
        try conn.execute("CREATE TABLE c (i int PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try conn.copy(into: "c", columns: ["i"]) { w in
                try w.row(["1"])
                try w.row(["not a number"])
            }
        }
        #expect(error?.sqlState == "22P02")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try conn.copy(into: "c", columns: ["i"]) { w in
                try w.row(["2"])
                throw Stop()
            }
        }
        #expect(try conn.query("SELECT count(*) FROM c").first?.int(0) == 0)
    }

    @Test func connectionRefusedNamesTheURLWithoutThePassword() throws {
        // Port 1 on loopback: nothing listens there.
        let url = "postgresql://waymark:s3cret-pw@127.0.0.1:1/waymark?connect_timeout=3"
        let error = #expect(throws: PostgresError.self) { _ = try PostgresConnection(url: url) }
        #expect(error?.kind == .connection)
        #expect(error?.isConnectionFailure == true)
        #expect(error?.description.contains("s3cret-pw") == false)
        #expect(error?.description.contains("waymark:***@127.0.0.1:1") == true)
        #expect(error?.hint?.contains("PostgreSQL is running") == true)
    }

    @Test func workerRunsJobsOffThePoolAndReconnects() async throws {
        let db = try PostgresTestDatabase("worker")
        defer { db.drop() }
        let worker = PostgresWorker(url: db.url)
        defer { worker.shutdown() }
        let pid = try await worker.run { try $0.query("SELECT pg_backend_pid()").first!.int(0) }
        let admin = try db.connect()
        try admin.query("SELECT pg_terminate_backend($1)", [pid])
        // The job on the killed connection fails as a connection failure …
        let error = await #expect(throws: PostgresError.self) {
            try await worker.run { try $0.query("SELECT 1") }
        }
        #expect(error?.isConnectionFailure == true)
        // … and the next one gets a new connection.
        let again = try await worker.run { try $0.query("SELECT pg_backend_pid()").first!.int(0) }
        #expect(again != pid)
    }
}
