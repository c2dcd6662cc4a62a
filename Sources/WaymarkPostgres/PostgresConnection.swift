import CLibPQ

/// One connection to PostgreSQL through libpq. The connection exclusively owns its `PGconn`: it is
/// closed by `close()` or when the object is released, also when connecting failed (libpq
/// allocates a handle even then).
///
/// All calls block the calling thread until the server answers. Do not call them from Swift's
/// cooperative thread pool (it has one thread per core; a slow query would stall unrelated tasks):
/// use a `PostgresWorker`, which owns a connection on a dedicated thread, or a thread of your own.
/// The class is deliberately not `Sendable`: libpq connections must not be used by two threads at
/// once, and the type system keeps each connection on the thread that made it.
///
/// Values are always sent as bound text parameters (`PQexecParams`), never spliced into SQL.
public final class PostgresConnection {
    var handle: OpaquePointer?
    /// The connection string as given (may contain a password: only `maskedURL` is ever printed).
    private let url: String
    /// `url` with the password masked, for messages and logs.
    public let maskedURL: String

    /// Connects with a URL (`postgresql://user:password@host:port/database?sslmode=…`) or a libpq
    /// key/value string. An empty string uses libpq's environment (`PGHOST`, `PGPORT`, `PGUSER`,
    /// `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE` …) and defaults.
    public init(url: String) throws {
        self.url = url
        self.maskedURL = url.isEmpty ? "(libpq environment)" : PostgresURL.masked(url)
        try open()
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection. Safe to call more than once.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// True while libpq considers the connection usable.
    public var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// The server's version number (e.g. 150004 for 15.4), or 0 when not connected.
    public var serverVersion: Int {
        guard let handle else { return 0 }
        return Int(PQserverVersion(handle))
    }

    /// Drops the current connection (if any) and connects again with the same URL.
    public func reconnect() throws {
        close()
        try open()
    }

    private func open() throws {
        let conn = PQconnectdb(url)
        guard let conn, PQstatus(conn) == CONNECTION_OK else {
            let message = conn.map { Self.trimmed(PQerrorMessage($0)) } ?? "out of memory"
            if let conn { PQfinish(conn) }
            throw PostgresError(kind: .connection, operation: "connect to \(maskedURL)", message: message,
                                hint: PostgresError.connectionHint(for: message))
        }
        // libpq prints NOTICEs (e.g. "relation already exists, skipping") on stderr by default.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        handle = conn
    }

    func requireHandle(_ operation: String) throws -> OpaquePointer {
        guard let handle else {
            throw PostgresError(kind: .connection, operation: operation, message: "the connection is closed",
                                hint: "reconnect before using it")
        }
        return handle
    }

    static func trimmed(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        var s = String(cString: text)
        while let last = s.last, last.isWhitespace { s.removeLast() }
        if s.hasPrefix("ERROR:  ") { s.removeFirst(8) }
        return s
    }
}
