import CLibPQ

/// The data format of `COPY … FROM STDIN`.
public enum PostgresCopyFormat: Sendable {
    /// PostgreSQL's text format: tab-separated, `\N` for NULL, backslash escapes.
    case text
    /// CSV with `,` and `"`; NULL is an unquoted empty field, an empty string is `""`.
    case csv

    /// The `WITH (…)` options that match what `PostgresCopyWriter` writes.
    public var options: String {
        switch self {
        case .text: "(FORMAT text)"
        case .csv: "(FORMAT csv)"
        }
    }
}

/// Rows for a `COPY … FROM STDIN`, escaped for the chosen format and sent to the server in chunks.
/// Get one from `PostgresConnection.copy(into:columns:format:_:)`.
public struct PostgresCopyWriter: ~Copyable {
    let connection: PostgresConnection
    let format: PostgresCopyFormat
    var buffer: [UInt8] = []
    /// Rows written so far.
    public private(set) var rowCount = 0
    static let chunkSize = 256 * 1024

    init(connection: PostgresConnection, format: PostgresCopyFormat) {
        self.connection = connection
        self.format = format
        buffer.reserveCapacity(Self.chunkSize + 4096)
    }

    /// Appends one row; `nil` is NULL. The number of fields must match the column list.
    public mutating func row(_ fields: [String?]) throws {
        for (i, field) in fields.enumerated() {
            if i > 0 { buffer.append(format == .text ? 0x09 : 0x2C) }
            append(field)
        }
        buffer.append(0x0A)
        rowCount += 1
        if buffer.count >= Self.chunkSize { try flush() }
    }

    /// Appends one field of the current row (use with `endRow()` to avoid building an array).
    public mutating func field(_ value: String?, first: Bool = false) {
        if !first { buffer.append(format == .text ? 0x09 : 0x2C) }
        append(value)
    }

    /// Ends the row begun with `field(_:first:)`.
    public mutating func endRow() throws {
        buffer.append(0x0A)
        rowCount += 1
        if buffer.count >= Self.chunkSize { try flush() }
    }

    private mutating func append(_ value: String?) {
        switch format {
        case .text:
            guard let value else { buffer.append(contentsOf: [0x5C, 0x4E]); return }  // \N
            for b in value.utf8 {
                switch b {
                case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
                case 0x09: buffer.append(contentsOf: [0x5C, 0x74])
                case 0x0A: buffer.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: buffer.append(contentsOf: [0x5C, 0x72])
                default: buffer.append(b)
                }
            }
        case .csv:
            guard let value else { return }  // unquoted empty = NULL
            let needsQuotes = value.isEmpty || value.utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
                || value == "\\."
            guard needsQuotes else { buffer.append(contentsOf: value.utf8); return }
            buffer.append(0x22)
            for b in value.utf8 {
                if b == 0x22 { buffer.append(0x22) }
                buffer.append(b)
            }
            buffer.append(0x22)
        }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        let handle = try connection.requireHandle("COPY")
        let ok = buffer.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
        }
        guard ok == 1 else { throw connection.connectionError("COPY (send data)") }
        buffer.removeAll(keepingCapacity: true)
    }
}

extension PostgresConnection {
    /// Streams rows into `table` with `COPY table (columns) FROM STDIN`, which is much faster than
    /// INSERTs for many rows. `body` writes the rows; when it throws, the COPY is aborted and
    /// nothing is stored. Returns the number of rows the server stored.
    ///
    /// Inside a transaction, the COPY becomes part of it.
    @discardableResult
    public func copy(into table: String, columns: [String], format: PostgresCopyFormat = .text,
                     _ body: (inout PostgresCopyWriter) throws -> Void) throws -> Int {
        let sql = "COPY \(table) (\(columns.joined(separator: ", "))) FROM STDIN WITH \(format.options)"
        let handle = try requireHandle("COPY into \(table)")
        _ = try consume(PQexec(handle, sql), operation: "COPY into \(table)", expect: [PGRES_COPY_IN])
        var writer = PostgresCopyWriter(connection: self, format: format)
        var failure: (any Error)?
        do {
            try body(&writer)
            try writer.flush()
        } catch {
            failure = error
        }
        let end = PQputCopyEnd(handle, failure == nil ? nil : "aborted by the client")
        guard end == 1 else { throw failure ?? connectionError("COPY into \(table) (end)") }
        // Drain every result of the COPY; the first error wins.
        var firstError: PostgresError?
        var stored = 0
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                stored = Int(String(cString: PQcmdTuples(result))) ?? writer.rowCount
            } else if firstError == nil {
                firstError = Self.error(from: result, operation: "COPY into \(table)", connection: handle)
            }
        }
        if let failure { throw failure }
        if let firstError { throw firstError }
        return stored
    }
}
