import ArgumentParser
import Foundation
import Logging
import Prometheus
import WaymarkHTTP
import WaymarkService

/// What `waymark bridge` and `waymark homeassistant` share with the other services: the settings
/// layers (flags > environment > file > defaults), SIGTERM/SIGINT handling, the metrics endpoint.
enum ServiceLaunch {
    /// Serves `registry` on `metricsHost:metricsPort` (0 = no endpoint), calls `stop` on SIGTERM
    /// or SIGINT, and runs `run` until it returns; a failure is logged and exits with status 1.
    static func run(logger: Logger, registry: PrometheusCollectorRegistry, metricsHost: String, metricsPort: Int,
                    stop: @escaping @Sendable () -> Void, run: () throws -> Void) throws {
        var endpoint: MetricsEndpoint?
        if metricsPort != 0 {
            let e = MetricsEndpoint(registry: registry, host: metricsHost, port: metricsPort)
            try e.startBlocking()
            logger.info("metrics at http://\(metricsHost):\(e.port)/metrics")
            endpoint = e
        }
        defer { endpoint?.stopBlocking() }
        let signals = onTerminate(logger: logger, stop)
        defer { signals.forEach { $0.cancel() } }
        do {
            try run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
    }

    /// The configuration layers from `--config`, `--set KEY=VALUE` items and named flags; a
    /// malformed `--set` is a usage error.
    static func layers(configFile: String?, envPrefix: String, named: [String: String], set: [String],
                       knownKeys: [String]) throws -> ConfigLayers {
        var flags = named
        for item in set {
            guard let eq = item.firstIndex(of: "=") else {
                throw ValidationError("--set '\(item)': write KEY=VALUE, e.g. --set log.level=debug")
            }
            flags[String(item[..<eq])] = String(item[item.index(after: eq)...])
        }
        do {
            return try ConfigLayers(filePath: configFile, envPrefix: envPrefix, flags: flags, knownKeys: knownKeys)
        } catch let error as ConfigLayers.ConfigError {
            throw ValidationError(error.description)
        }
    }

    /// Calls `stop` on the first SIGTERM or SIGINT; keep the returned sources alive while running.
    static func onTerminate(logger: Logger, _ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                logger.notice("signal \(number): stopping")
                stop()
            }
            source.resume()
            return source
        }
    }

    /// A random boot id, 16 hex digits, as `waymark-edge` makes them.
    static func makeBootID() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &g)) }.joined()
    }

    /// The version the services put in their statuses and discovery payloads.
    static let version = "0.1.0"
}
