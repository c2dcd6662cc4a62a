public import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Builds a Hummingbird application with our limits: one place that decides how every Waymark
/// HTTP server treats its connections.
public enum HTTPApplication {
    public static func make<Context: RequestContext>(
        router: Router<Context>, configuration: ApplicationConfiguration, limits: HTTPLimits,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol where Context: InitializableFromSource<ApplicationRequestContextSource> {
        var configuration = configuration
        configuration.availableConnectionsDelegate = MaximumAvailableConnections(limits.maxConnections)
        var channel = HTTP1Channel.Configuration(idleTimeout: limits.idleTimeout)
        channel.httpDecoder = .init(maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
                                    maxHeaderFieldCount: 100)
        return Application(
            router: router, server: .http1(configuration: channel), configuration: configuration,
            onServerRunning: onServerRunning, logger: Logger(label: "waymark.http"))
    }
}
