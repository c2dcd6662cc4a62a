extension PostgresConnection {
    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT` when it returns, `ROLLBACK` when it
    /// throws (the error is rethrown; a failed rollback on a broken connection is ignored, the
    /// server rolls back by itself when the connection ends).
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        try execute("COMMIT")
        return value
    }
}
