public import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// A Hummingbird application run in a task of its own, for callers that are not structured as one
/// `ServiceGroup` (the edge agent and the aggregator run their own threads): `start` returns once
/// the socket is bound, with the port it got, and `stop` ends it. Its tasks run on a
/// `ServerExecutor`, not on the shared cooperative pool.
///
/// `@unchecked Sendable`: `task` and `port` are written in `start` (before anything else can see
/// the server) and in `stop`, under `lock`.
public final class BackgroundServer: @unchecked Sendable {
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private let lock = NIOLock()
    private var task: Task<Void, Never>?
    private var group: ServiceGroup?
    private var boundPort: Int = 0
    private let host: String
    private let requestedPort: Int
    private let name: String

    public init(name: String, host: String, port: Int) {
        self.name = name
        self.host = host
        self.requestedPort = port
    }

    /// The port the server listens on (the one asked for, or the one picked for port 0).
    public var port: Int { lock.withLock { boundPort } }

    /// Starts `makeApplication(configuration, onServerRunning)` and waits until it listens.
    /// Throws when it cannot bind (port taken, bad address), naming the address and the fix.
    public func start<App: ApplicationProtocol>(
        _ makeApplication: @escaping @Sendable (ApplicationConfiguration, @escaping @Sendable (any Channel) async -> Void) -> App
    ) async throws {
        let configuration = ApplicationConfiguration(
            address: .hostname(host, port: requestedPort), serverName: nil, reuseAddress: true)
        let (name, host, requestedPort) = (self.name, self.host, self.requestedPort)
        let started = StartSignal()
        let app = makeApplication(configuration) { channel in
            started.finish(.success(channel.localAddress?.port ?? requestedPort))
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "waymark.http")))
        // Its own executor: the connections' tasks inherit the preference (see ServerExecutor).
        let task = Task(executorPreference: ServerExecutor(label: "waymark-\(name)-http")) {
            do {
                try await group.run()
                started.finish(.failure(StartError(description: "\(name): the server stopped before it listened on \(host):\(requestedPort)")))
            } catch {
                started.finish(.failure(StartError(
                    description: "\(name): cannot listen on \(host):\(requestedPort): \(error); choose another port (0 picks a free one)")))
            }
        }
        lock.withLock {
            self.task = task
            self.group = group
        }
        do {
            let port = try await started.wait()
            lock.withLock { boundPort = port }
        } catch {
            task.cancel()
            throw error
        }
    }

    /// Ends the server gracefully (requests in progress finish, then connections close) and
    /// releases the port.
    public func stop() async {
        let (task, group) = lock.withLock { () -> (Task<Void, Never>?, ServiceGroup?) in
            defer {
                self.task = nil
                self.group = nil
            }
            return (self.task, self.group)
        }
        await group?.triggerGracefulShutdown()
        await task?.value
    }
}

/// The outcome of a start, delivered once (by the bound socket or by the failing run), to one waiter.
private final class StartSignal: Sendable {
    private let state = NIOLockedValueBox<(result: Result<Int, any Error>?, waiter: CheckedContinuation<Int, any Error>?)>((nil, nil))

    func finish(_ result: Result<Int, any Error>) {
        let waiter = state.withLockedValue { s -> CheckedContinuation<Int, any Error>? in
            guard s.result == nil else { return nil }
            s.result = result
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(with: result)
    }

    func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            let ready = state.withLockedValue { s -> Result<Int, any Error>? in
                if let r = s.result { return r }
                s.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
