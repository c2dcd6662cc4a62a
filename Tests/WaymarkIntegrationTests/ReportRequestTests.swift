import Testing
import WaymarkPostgres
import WaymarkReports

/// Argument validation, output formats and parameter binding of `waymark report`.
struct ReportRequestTests {
    @Test func datesInEveryAcceptedForm() throws {
        #expect(ReportDate.parse("2026-06-01") == .init(seconds: 1_780_272_000, isDateOnly: true))
        func seconds(_ text: String) -> Int64 { ReportDate.parse(text)?.seconds ?? -1 }
        let morning: Int64 = 1_780_272_000 + 9 * 3600 + 1800
        #expect(seconds("2026-06-01T09:30:00Z") == morning)
        #expect(seconds("2026-06-01T11:30+02:00") == morning)
        #expect(seconds("2026-06-01 09:30:15.250") == morning + 15)
        #expect(seconds("2024-02-29") == 1_709_164_800)
        for bad in ["2026-02-30", "2026-13-01", "01/06/2026", "2026-06-01T25:00Z", "2026-06-01T09:00+2", "yesterday", ""] {
            #expect(ReportDate.parse(bad) == nil, "\(bad)")
        }
        #expect(ReportDate.iso(1_780_272_000 + 3661) == "2026-06-01T01:01:01Z")
    }

    @Test func requestsAreValidatedWithTheChoicesInTheError() throws {
        let r = try ReportRequest.parse(name: "Traffic", from: "2026-06-01", to: "2026-06-30", region: "lobby", by: "week")
        #expect(r.kind == .traffic && r.period == .week && r.region == "lobby")
        #expect(r.to - r.from == 30 * 86_400, "a bare --to date includes that day")

        let unknown = #expect(throws: ReportError.self) { try ReportRequest.parse(name: "footfall", from: "2026-06-01", to: "2026-06-02") }
        #expect(unknown?.code == .unknownReport)
        for name in ReportKind.allCases.map(\.rawValue) { #expect(unknown?.message.contains(name) == true) }

        let badDate = #expect(throws: ReportError.self) { try ReportRequest.parse(name: "dwell", from: "June 1", to: "2026-06-02") }
        #expect(badDate?.message.contains("--from 'June 1'") == true)
        #expect(badDate?.message.contains("YYYY-MM-DD") == true)
        let badPeriod = #expect(throws: ReportError.self) { try ReportRequest.parse(name: "dwell", from: "2026-06-01", to: "2026-06-02", by: "month") }
        #expect(badPeriod?.message == "--by 'month' is not valid; use one of: hour, day, week")
        let backwards = #expect(throws: ReportError.self) { try ReportRequest.parse(name: "dwell", from: "2026-06-02T10:00Z", to: "2026-06-02T09:00Z") }
        #expect(backwards?.message.contains("must be after") == true)
    }

    @Test func csvAndJSONEscapeAndKeepTypes() {
        var table = ReportTable(title: "t \"quoted\"", columns: [.init("name", .text), .init("n", .integer), .init("x", .decimal),
                                                                  .init("at", .timestamp), .init("ok", .boolean)])
        table.rows = [[.text("a,b \"c\"\nd"), .integer(42), .decimal(2.0 / 3.0), .timestamp("2026-06-01T00:00:00Z"), .boolean(true)],
                      [.text("plain"), .null, .decimal(-0.0001), .null, .boolean(false)]]
        #expect(ReportFormatter.csv(table) == "name,n,x,at,ok\n\"a,b \"\"c\"\"\nd\",42,0.667,2026-06-01T00:00:00Z,true\nplain,,0,,false\n")
        #expect(ReportFormatter.json(table) == """
            {"report":"t \\"quoted\\"","columns":[{"name":"name","type":"text"},{"name":"n","type":"integer"},{"name":"x","type":"decimal"},{"name":"at","type":"timestamp"},{"name":"ok","type":"boolean"}],"rows":[
            {"name":"a,b \\"c\\"\\nd","n":42,"x":0.667,"at":"2026-06-01T00:00:00Z","ok":true},
            {"name":"plain","n":null,"x":0,"at":null,"ok":false}
            ]}

            """)
        #expect(ReportFormatter.jsonString("tab\tbell\u{07}") == "\"tab\\tbell\\u0007\"")
        let text = ReportFormatter.text(table)
        #expect(text.hasPrefix("t \"quoted\"\n\nname"))
        #expect(text.hasSuffix("(2 rows)\n"))
    }

    @Test func postgresTextBecomesTypedCells() throws {
        #expect(try ReportValue.fromPostgres("2026-06-01 09:00:00+00", kind: .timestamp, column: "p") == .timestamp("2026-06-01T09:00:00Z"))
        #expect(try ReportValue.fromPostgres("12", kind: .integer, column: "n") == .integer(12))
        #expect(try ReportValue.fromPostgres(nil, kind: .decimal, column: "x") == .null)
        #expect(throws: ReportError.self) { try ReportValue.fromPostgres("abc", kind: .integer, column: "n") }
    }
}

@Suite("Report parameters and role", .enabled(if: PostgresTestServer.shouldRun))
struct ReportSecurityTests {
    @Test func hostileValuesAreBoundAndNamedInTheError() throws {
        let (db, conn, fixture, runner) = try ReportSQLTests.loaded("bound")
        defer { conn.close(); db.drop() }
        let hostile = "x'); DROP TABLE visits; --"
        let request = ReportRequest(kind: .traffic, from: ReportFixture.start, to: ReportFixture.start + 86_400, region: hostile)
        let error = #expect(throws: ReportError.self) { try runner.run(request, site: fixture.site.id) }
        #expect(error?.message.contains("unknown region") == true)
        #expect(error?.message.contains("regions: cafe, entrance, hall-a, hall-b, lobby, shop") == true)
        #expect(try conn.query("SELECT count(*) FROM visits").first?.int(0) == fixture.visits.count)
        let site = #expect(throws: ReportError.self) { try runner.run(request, site: "elsewhere") }
        #expect(site?.message.contains("sites in this database: report-test") == true)
        let period = #expect(throws: PostgresError.self) {
            try conn.query("SELECT * FROM waymark_report_dwell($1, $2, $3, NULL, $4)", [fixture.site.id, "2026-06-01", "2026-06-02", "fortnight"])
        }
        #expect(period?.hint == "use one of: hour, day, week")
    }

    @Test func theReportRoleReadsAndRefreshesButCannotWrite() throws {
        let (db, conn, fixture, runner) = try ReportSQLTests.loaded("role")
        defer { conn.close(); db.drop() }
        try conn.execute("SET ROLE waymark_report")
        let table = try runner.run(ReportRequest(kind: .dwell, from: ReportFixture.start, to: ReportFixture.start + 14 * 86_400), site: fixture.site.id)
        #expect(!table.rows.isEmpty)
        #expect(try runner.refresh() == 0)
        for statement in ["INSERT INTO sites (site_id) VALUES ('x')", "DELETE FROM visits", "UPDATE report_region_rollup SET visits = 0",
                          "DROP TABLE report_path_daily", "CREATE TABLE mine (a int)"] {
            let denied = #expect(throws: PostgresError.self) { try conn.execute(statement) }
            #expect(denied?.sqlState == "42501", "\(statement)")
        }
    }
}
