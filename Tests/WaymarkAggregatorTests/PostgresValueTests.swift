import Testing
import WaymarkPostgres

@Suite struct PostgresValueTests {
    @Test(arguments: [
        ("postgresql://waymark:hunter2@db:5432/waymark", "postgresql://waymark:***@db:5432/waymark"),
        ("postgresql://waymark@db/waymark", "postgresql://waymark@db/waymark"),
        ("postgres://u:p%40ss@h/d?sslmode=require&password=again", "postgres://u:***@h/d?sslmode=require&password=***"),
        ("host=db user=w password=secret dbname=w", "host=db user=w password=*** dbname=w"),
        ("password=secret host=db", "password=*** host=db"),
    ])
    func passwordsAreMasked(url: String, masked: String) {
        #expect(PostgresURL.masked(url) == masked)
    }

    @Test(arguments: [
        ("postgresql://u:p@h:5432/waymark", "postgresql://u:p@h:5432/other"),
        ("postgresql://u@h/waymark?sslmode=require&connect_timeout=5", "postgresql://u@h/other?sslmode=require&connect_timeout=5"),
        ("postgresql://u@h:5432", "postgresql://u@h:5432/other"),
    ])
    func anotherDatabaseOnTheSameServer(url: String, expected: String) {
        #expect(PostgresURL.withDatabase(url, "other") == expected)
    }

    @Test func arraysBindAsQuotedLiterals() {
        #expect(["a", "b,c", "d\"e", "f\\g"].postgresText == #"{"a","b,c","d\"e","f\\g"}"#)
        #expect((["x", nil] as [String?]).postgresText == #"{"x",NULL}"#)
    }

    @Test func arrayOutputDecodes() throws {
        #expect(try [String?](postgresText: #"{a,"b c","d\"e",NULL,"NULL"}"#) == ["a", "b c", "d\"e", nil, "NULL"])
        #expect(try [Int](postgresText: "{}") == [])
        #expect(throws: PostgresDecodingFailure.self) { try [Int](postgresText: "{1,x}") }
    }

    @Test func numbersRoundTrip() throws {
        for x in [0.1, -59.5, 1e-9, 1.7e308, .infinity, -.infinity] {
            #expect(try Double(postgresText: x.postgresText) == x)
        }
        #expect(try Double(postgresText: Double.nan.postgresText).isNaN)
        #expect(UInt64.max.postgresText == "18446744073709551615")
        #expect(throws: PostgresDecodingFailure.self) { try Int(postgresText: nil) }
    }
}
