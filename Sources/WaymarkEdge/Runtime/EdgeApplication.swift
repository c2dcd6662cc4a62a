import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals
import WaymarkConfig
import WaymarkCore
import WaymarkService
import WaymarkHTTP

/// Builds and runs the whole agent from configuration layers: the testable body behind the
/// `waymark-edge` program's thin `@main`.
public enum EdgeApplication {
    /// Loads the configuration (flags > `WAYMARK_EDGE_*` > file > defaults), the site file, the
    /// source and the metrics endpoint, then runs the agent until SIGTERM/SIGINT (or the end of a
    /// replay with `replay.exit_when_done`).
    public static func run(configFile: String?, flags: [String: String],
                           environment: [String: String] = ProcessInfo.processInfo.environment,
                           printConfig: Bool = false) async throws {
        let layers = try ConfigLayers(filePath: configFile, envPrefix: "WAYMARK_EDGE", flags: flags,
                                      environment: environment, knownKeys: EdgeConfig.keys)
        let config = try EdgeConfig.load(layers)
        if printConfig {
            for line in layers.describe(secretKeys: EdgeConfig.secretKeys) { print(line) }
            return
        }
        _ = try WaymarkLogging.bootstrap(level: config.logLevel)
        let logger = Logger(label: "waymark.edge")
        for line in layers.describe(secretKeys: EdgeConfig.secretKeys) { logger.debug("config \(line)") }
        for advice in config.advice { logger.warning("\(advice)") }

        let site: WaymarkCore.Site
        do { site = try SiteLoader.load(path: config.sitePath).site } catch {
            throw ConfigLayers.ConfigError("site file: \(error)")
        }
        let source = try config.makeSource()
        let registry = PrometheusCollectorRegistry()
        var endpoint: MetricsEndpoint?
        if config.metricsPort != 0 {
            let e = MetricsEndpoint(registry: registry, host: config.metricsHost, port: config.metricsPort)
            try await e.start()
            logger.info("metrics at http://\(config.metricsHost):\(e.port)/metrics")
            endpoint = e
        }
        do {
            let agent = try EdgeAgent(config: config, site: site, source: source, logger: logger, registry: registry)
            let group = ServiceGroup(configuration: .init(
                services: [.init(service: agent, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        } catch {
            await endpoint?.stop()
            throw error
        }
        await endpoint?.stop()
    }
}

