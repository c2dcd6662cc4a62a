import Foundation

/// A PostgreSQL connection on its own thread, for async code.
///
/// libpq calls block; running them on Swift's cooperative pool (one thread per core) would stall
/// every other task while a query or a reconnect waits on the network. The worker keeps one
/// `PostgresConnection` on a dedicated thread and runs submitted jobs there one at a time, in
/// order, so the connection is only ever touched by that thread.
///
/// The connection is opened lazily by the first job and reopened by the next job after a
/// connection failure, so a database that was down is picked up again without extra code.
///
/// `@unchecked Sendable`: the mutable state (`jobs`, `stopped`) is guarded by `condition`; the
/// connection lives only in the thread's closure and is never shared.
public final class PostgresWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var stopped = false
    private let url: String
    public let maskedURL: String

    /// `url` as for `PostgresConnection(url:)`. Nothing connects until the first job.
    public init(url: String, name: String = "waymark-postgres") {
        self.url = url
        self.maskedURL = url.isEmpty ? "(libpq environment)" : PostgresURL.masked(url)
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    /// Runs `body` on the worker's thread with a connected `PostgresConnection` and returns its
    /// result. A connection that broke during `body` is closed so the next job reconnects; the
    /// error is rethrown.
    public func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit { connection in
                continuation.resume(with: Result { try body(connection.get()) })
            }
        }
    }

    /// Runs `body` on the worker thread and blocks the caller until it is done (for code that
    /// already runs on a thread of its own, e.g. a command-line tool's main thread). Never call it
    /// from the worker's own thread.
    public func runBlocking<T>(_ body: @escaping (PostgresConnection) throws -> T) throws -> T {
        let done = NSCondition()
        nonisolated(unsafe) var outcome: Result<T, any Error>?
        submit { connection in
            let r = Result { try body(connection.get()) }
            done.lock(); outcome = r; done.signal(); done.unlock()
        }
        done.lock()
        while outcome == nil { done.wait() }
        done.unlock()
        return try outcome!.get()
    }

    /// Finishes queued jobs, closes the connection and ends the thread. Jobs submitted afterwards
    /// fail with a usage error.
    public func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private typealias Job = (Result<PostgresConnection, PostgresError>) -> Void

    private func submit(_ job: @escaping Job) {
        condition.lock()
        if stopped {
            condition.unlock()
            job(.failure(PostgresError(kind: .usage, operation: "run", message: "the PostgreSQL worker was shut down")))
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        var connection: PostgresConnection?
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                break
            }
            let job = jobs.removeFirst()
            condition.unlock()
            if connection?.isConnected != true {
                connection = nil
                do {
                    connection = try PostgresConnection(url: url)
                } catch let error as PostgresError {
                    job(.failure(error))
                    continue
                } catch {
                    continue
                }
            }
            job(.success(connection!))
            if connection?.isConnected != true { connection = nil }
        }
        connection?.close()
    }
}
