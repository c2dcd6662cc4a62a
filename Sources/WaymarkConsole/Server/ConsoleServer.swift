import Hummingbird
import Logging
import NIOCore
import WaymarkCore
import WaymarkHTTP

/// Builds the console's Hummingbird application: the routes behind request logging and
/// sign-in, with the shared HTTP limits. The tests and `waymark serve` both call this.
public enum ConsoleServer {
    /// Connections: SSE streams stay open while a page is, so allow a good number; idle
    /// keep-alive connections and trickled requests are closed after 30 s.
    public static let limits = HTTPLimits(idleTimeout: .seconds(30), maxConnections: 512, maxHeaderBytes: 16 * 1024)

    public static func application(
        config: ConsoleConfig, site: Site, hub: LiveHub, database: ConsoleDatabase, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let sessions = SessionStore(lifetimeS: config.sessionHours * 3600)
        let router = Router()
        router.add(middleware: RequestLogMiddleware(logger: logger))
        router.add(middleware: AuthMiddleware(credentials: config.credentials, sessions: sessions, disabled: config.authDisabled, secureCookie: false))
        ConsoleRoutes(site: site, hub: hub, database: database, credentials: config.credentials, sessions: sessions,
                      authDisabled: config.authDisabled, logger: logger).register(on: router)
        return HTTPApplication.make(
            router: router, configuration: ApplicationConfiguration(address: .hostname(config.host, port: config.port), serverName: nil),
            limits: limits, onServerRunning: onServerRunning)
    }
}
