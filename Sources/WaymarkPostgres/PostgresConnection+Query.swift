import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

extension PostgresConnection {
    /// Runs one statement with bound parameters (`$1`, `$2` …) and returns its rows (empty for
    /// statements that return none). `nil` binds SQL NULL. Values are sent in PostgreSQL's text
    /// form, except `PostgresBytes`, which is sent in binary form.
    ///
    ///     try db.query("SELECT id FROM devices WHERE first_seen > $1", [since])
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> PostgresResult {
        let handle = try requireHandle("query")
        var owned: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        owned.reserveCapacity(parameters.count)
        defer { owned.forEach { free($0) } }
        for p in parameters {
            if let bytes = p as? PostgresBytes {
                let copy = malloc(max(1, bytes.bytes.count))!.assumingMemoryBound(to: CChar.self)
                bytes.bytes.withUnsafeBytes { raw in
                    if let base = raw.baseAddress { memcpy(copy, base, raw.count) }
                }
                owned.append(copy)
                lengths.append(Int32(bytes.bytes.count))
                formats.append(1)
            } else {
                owned.append(p?.postgresText.flatMap { strdup($0) })
                lengths.append(0)
                formats.append(0)
            }
        }
        let binary = formats.contains(1)
        let result = owned.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            lengths.withUnsafeBufferPointer { lengths in
                formats.withUnsafeBufferPointer { formats in
                    PQexecParams(handle, sql, Int32(values.count), nil, values.baseAddress,
                                 binary ? lengths.baseAddress : nil, binary ? formats.baseAddress : nil, 0)
                }
            }
        }
        return try consume(result, operation: "query", expect: [PGRES_COMMAND_OK, PGRES_TUPLES_OK])
    }

    /// Runs SQL text that may hold several statements and no parameters (migrations, `BEGIN`).
    /// Never pass values built from input here: use `query` with parameters.
    public func execute(_ sql: String) throws {
        let handle = try requireHandle("execute")
        _ = try consume(PQexec(handle, sql), operation: "execute", expect: [PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY])
    }

    /// Reads a result, clears it, and throws a `PostgresError` unless its status is expected.
    func consume(_ result: OpaquePointer?, operation: String, expect: [ExecStatusType]) throws -> PostgresResult {
        guard let result else {
            throw connectionError(operation)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard expect.contains(status) else {
            throw Self.error(from: result, operation: operation, connection: handle)
        }
        return PostgresResult(copying: result)
    }

    /// The error for a call that returned no result at all (out of memory or the connection broke).
    func connectionError(_ operation: String) -> PostgresError {
        let message = handle.map { Self.trimmed(PQerrorMessage($0)) } ?? "the connection is closed"
        return PostgresError(kind: .connection, operation: operation,
                             message: message.isEmpty ? "no result from the server" : message,
                             hint: PostgresError.connectionHint(for: message))
    }

    static func error(from result: OpaquePointer, operation: String, connection: OpaquePointer?) -> PostgresError {
        func field(_ code: Int32) -> String? {
            guard let p = PQresultErrorField(result, code) else { return nil }
            return String(cString: p)
        }
        let state = field(Int32(UInt8(ascii: "C")))
        let primary = field(Int32(UInt8(ascii: "M"))) ?? trimmed(PQresultErrorMessage(result))
        let detail = field(Int32(UInt8(ascii: "D")))
        let serverHint = field(Int32(UInt8(ascii: "H")))
        let broken = connection.map { PQstatus($0) != CONNECTION_OK } ?? true
        if state == nil && broken {
            let message = primary.isEmpty ? connection.map { trimmed(PQerrorMessage($0)) } ?? "" : primary
            return PostgresError(kind: .connection, operation: operation, message: message,
                                 hint: PostgresError.connectionHint(for: message))
        }
        return PostgresError(kind: .server, operation: operation, message: primary, sqlState: state,
                             detail: detail, hint: serverHint ?? hint(forSQLState: state))
    }

    static func hint(forSQLState state: String?) -> String? {
        switch state {
        case "42P01": "a table is missing: run `waymark db migrate` against this database"
        case "42501": "the role lacks a privilege: connect as the ingest role for writes, the reports role for reads"
        case "23505": "a row with the same key exists already"
        case "53300": "too many connections: raise max_connections or use fewer clients"
        case .some(let s) where s.hasPrefix("57P"): "the server is shutting down or restarting; retry after reconnecting"
        default: nil
        }
    }
}
