import Dispatch
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
public import Prometheus

/// Serves the Prometheus text format on `http://HOST:PORT/metrics`, for `waymark-edge` and
/// `waymark-aggregator`, on Hummingbird (SwiftNIO): idle or slow clients cost a connection each,
/// never a scrape; `HTTPLimits.metrics` closes them after its idle timeout.
public final class MetricsEndpoint: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let server: BackgroundServer
    private let limits: HTTPLimits

    public init(registry: PrometheusCollectorRegistry, host: String = "127.0.0.1", port: Int, limits: HTTPLimits = .metrics) {
        self.registry = registry
        self.limits = limits
        self.server = BackgroundServer(name: "metrics", host: host, port: port)
    }

    /// The port it listens on (after `start`; the picked one when asked for port 0).
    public var port: Int { server.port }

    /// Binds and starts serving; returns once it listens.
    public func start() async throws {
        let registry = self.registry
        let limits = self.limits
        try await server.start { configuration, onServerRunning in
            HTTPApplication.make(router: MetricsEndpoint.router(registry: registry), configuration: configuration,
                                 limits: limits, onServerRunning: onServerRunning)
        }
    }

    /// `start` for callers on a thread of their own (the aggregator): blocks that thread until
    /// the server listens. Never call it from a task.
    public func startBlocking() throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = NIOLockedValueBox<(any Error)?>(nil)
        Task {
            do { try await self.start() } catch { outcome.withLockedValue { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = outcome.withLockedValue({ $0 }) { throw error }
    }

    /// Stops serving and releases the port.
    public func stop() async {
        await server.stop()
    }

    /// `stop` for callers on a thread of their own.
    public func stopBlocking() {
        let done = DispatchSemaphore(value: 0)
        Task {
            await self.stop()
            done.signal()
        }
        done.wait()
    }

    /// `GET /metrics`; anything else is a 404 that says where the metrics are.
    static func router(registry: PrometheusCollectorRegistry) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            var body: [UInt8] = []
            registry.emit(into: &body)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        return router
    }
}
