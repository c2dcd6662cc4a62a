/// A failed PostgreSQL operation: what was attempted, what the server or libpq said, and what to do.
///
/// `sqlState` is the five-character SQLSTATE when the server reported one (`23505` unique violation,
/// `57P01` admin shutdown, `08006` connection failure …); libpq-side failures (cannot connect, lost
/// connection) have `sqlState == nil` and `kind == .connection`.
///
/// Messages never contain a password: connection URLs are masked with `PostgresURL.masked`.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        /// Could not connect, or the connection broke; retrying after a reconnect may succeed.
        case connection
        /// The server rejected a statement (syntax, constraint, permission …).
        case server
        /// COPY protocol failure.
        case copy
        /// A value in a result row could not be read as the requested type.
        case decoding
        /// The caller used the API wrongly (e.g. a column that does not exist).
        case usage
    }

    public var kind: Kind
    /// What was attempted, e.g. `connect to postgresql://waymark:***@db:5432/waymark` or `query`.
    public var operation: String
    /// The primary message from the server or libpq, trimmed.
    public var message: String
    public var sqlState: String?
    /// The server's DETAIL field, when it sent one.
    public var detail: String?
    /// What the user can do about it.
    public var hint: String?

    public init(kind: Kind, operation: String, message: String, sqlState: String? = nil,
                detail: String? = nil, hint: String? = nil) {
        self.kind = kind
        self.operation = operation
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
    }

    /// True when the failure is about the connection rather than the statement: the caller should
    /// reconnect and retry later instead of treating the data as bad.
    public var isConnectionFailure: Bool {
        if kind == .connection { return true }
        guard let state = sqlState else { return false }
        // Class 08: connection exception; 57P01–57P03: shutdown / cannot connect now.
        return state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03"
    }

    /// True when the server refused the statement for the data it carried: SQLSTATE class 22
    /// (data exception: out of range, invalid text, bad encoding …), class 23 (integrity
    /// constraint violation) or 54000 (program limit exceeded, e.g. an index row too large).
    /// Retrying the same data cannot succeed; setting the offending rows aside can.
    public var isDataError: Bool {
        guard kind != .connection, let state = sqlState else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23") || state == "54000"
    }

    /// True when retrying the same statement later may succeed: connection failures
    /// (`isConnectionFailure`), insufficient resources (class 53: disk full, out of memory, too
    /// many connections), serialization failures and deadlocks (40001, 40P01), a lock not
    /// available (55P03), a cancelled statement (57014, e.g. statement_timeout) and the other
    /// operator intervention states (57P*).
    public var isTransient: Bool {
        if isConnectionFailure { return true }
        guard let state = sqlState else { return false }
        return state.hasPrefix("53") || state.hasPrefix("57P") || ["40001", "40P01", "55P03", "57014"].contains(state)
    }

    public var description: String {
        var s = "PostgreSQL: \(operation) failed: \(message)"
        if let sqlState { s += " (SQLSTATE \(sqlState))" }
        if let detail, !detail.isEmpty { s += "; \(detail)" }
        if let hint, !hint.isEmpty { s += " — \(hint)" }
        return s
    }

    /// A hint for a libpq connection failure message.
    static func connectionHint(for message: String) -> String {
        let m = message.lowercased()
        if m.contains("connection refused") {
            return "nothing accepts connections at that host and port: check the URL's host/port and that PostgreSQL is running"
        }
        if m.contains("password authentication failed") || m.contains("no password supplied") {
            return "check the user and password in the database URL (or PGPASSWORD / ~/.pgpass)"
        }
        if m.contains("does not exist") && m.contains("database") {
            return "create the database (createdb NAME) or fix the database name in the URL"
        }
        if m.contains("role") && m.contains("does not exist") {
            return "create the role (CREATE ROLE … LOGIN) or fix the user name in the URL"
        }
        if m.contains("could not translate host name") || m.contains("name or service not known") {
            return "the host name does not resolve: check the URL's host"
        }
        if m.contains("timeout") {
            return "the server did not answer in time: check the host, firewall and connect_timeout"
        }
        if m.contains("invalid uri") || m.contains("invalid connection option") || m.contains("missing \"=\"") {
            return "write the URL as postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
        }
        if m.contains("server closed the connection") || m.contains("terminating connection") {
            return "the server went away; it will be retried after a reconnect"
        }
        return "check the database URL and that PostgreSQL is reachable"
    }
}
