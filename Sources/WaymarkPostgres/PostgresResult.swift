import CLibPQ

/// The rows of a statement, copied out of libpq's `PGresult` (which is cleared right away), with
/// values in PostgreSQL's text format. Read them with `PostgresRow`'s typed getters.
public struct PostgresResult: Sendable {
    /// Column names in result order.
    public let columns: [String]
    /// Row-major values; `nil` is SQL NULL.
    let values: [String?]
    /// The number of rows a command affected (`INSERT 0 5` → 5), or 0 when not reported.
    public let affectedRows: Int

    init(copying result: OpaquePointer) {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        // COPY results report their column count but no names.
        columns = (0..<columnCount).map { PQfname(result, Int32($0)).map { String(cString: $0) } ?? "" }
        var values: [String?] = []
        values.reserveCapacity(rowCount * columnCount)
        for r in 0..<rowCount {
            for c in 0..<columnCount {
                if PQgetisnull(result, Int32(r), Int32(c)) == 1 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(r), Int32(c))))
                }
            }
        }
        self.values = values
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    public var count: Int { columns.isEmpty ? 0 : values.count / columns.count }
    public var isEmpty: Bool { count == 0 }

    public var rows: [PostgresRow] { (0..<count).map { PostgresRow(result: self, index: $0) } }
    public var first: PostgresRow? { isEmpty ? nil : PostgresRow(result: self, index: 0) }

    /// The index of a column by name.
    public func column(named name: String) throws -> Int {
        guard let i = columns.firstIndex(of: name) else {
            throw PostgresError(kind: .usage, operation: "read column '\(name)'",
                                message: "the result has no such column; it has: \(columns.joined(separator: ", "))")
        }
        return i
    }
}

/// One row of a `PostgresResult`.
///
///     let dwell = try row.decode(Double.self, "dwell_s")
///     let exited = try row.decode(Double?.self, 3)
public struct PostgresRow: Sendable {
    let result: PostgresResult
    public let index: Int

    /// The raw text of a column, `nil` for NULL.
    public func text(_ column: Int) -> String? {
        result.values[index * result.columns.count + column]
    }

    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, _ column: Int) throws -> T {
        guard column >= 0 && column < result.columns.count else {
            throw PostgresError(kind: .usage, operation: "read column \(column)",
                                message: "the result has \(result.columns.count) columns")
        }
        do {
            return try T(postgresText: text(column))
        } catch {
            let message = (error as? PostgresDecodingFailure)?.message ?? "\(error)"
            throw PostgresError(kind: .decoding, operation: "read column '\(result.columns[column])' as \(T.self)",
                                message: message)
        }
    }

    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, _ column: String) throws -> T {
        try decode(type, try result.column(named: column))
    }

    public func string(_ column: Int) throws -> String { try decode(String.self, column) }
    public func int(_ column: Int) throws -> Int { try decode(Int.self, column) }
    public func double(_ column: Int) throws -> Double { try decode(Double.self, column) }
    public func bool(_ column: Int) throws -> Bool { try decode(Bool.self, column) }
}
