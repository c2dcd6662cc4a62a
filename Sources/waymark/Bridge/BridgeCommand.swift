import ArgumentParser
import Foundation
import Logging
import Prometheus
import WaymarkConfig
import WaymarkCore
import WaymarkService

/// `waymark bridge`: ESPresense nodes and Theengs Gateway / OpenMQTTGateway receivers as gateways
/// of the site (docs/foreign-gateways.md).
struct BridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridge",
        abstract: "Make ESPresense nodes and Theengs/OpenMQTTGateway receivers gateways of the site.",
        discussion: """
            Reads the receivers' MQTT topics, maps each to the gateway the site file's \
            foreign_gateways section names, keeps the devices the site's tracking rules track, and \
            publishes one batch per gateway and window in the waymark-edge wire format, with a \
            retained status and a last will per gateway, so the aggregator treats them like any \
            gateway. Delivery is at most once: there is no spool and no resend. Settings come from \
            flags, then WAYMARK_BRIDGE_<KEY> environment variables, then the --config YAML file \
            (see deploy/bridge.example.yaml), then defaults. SIGTERM or SIGINT publishes the open \
            windows and each gateway's offline status, then exits.
            """)

    @Option(help: "YAML configuration file (see deploy/bridge.example.yaml).") var config: String?
    @Option(help: "The site file, with a foreign_gateways section (key: site).") var site: String?
    @Option(help: ArgumentHelp("MQTT broker URL, mqtt://HOST:PORT or mqtts://… (key: mqtt.url).", valueName: "url")) var broker: String?
    @Option(help: ArgumentHelp("Metrics port, 0 = off (key: metrics.port).", valueName: "port")) var metricsPort: Int?
    @Option(help: ArgumentHelp("Any key as KEY=VALUE, e.g. --set status.interval_s=5 (repeatable).", valueName: "key=value"))
    var set: [String] = []
    @Flag(help: "Print the effective settings (secrets masked) and exit.") var printConfig = false

    func run() throws {
        var named: [String: String] = [:]
        if let site { named["site"] = site }
        if let broker { named["mqtt.url"] = broker }
        if let metricsPort { named["metrics.port"] = String(metricsPort) }
        let layers = try ServiceLaunch.layers(configFile: config, envPrefix: "WAYMARK_BRIDGE", named: named, set: set, knownKeys: BridgeConfig.keys)
        if printConfig {
            for line in layers.describe(secretKeys: BridgeConfig.secretKeys) { print(line) }
            return
        }
        let settings: BridgeConfig
        do { settings = try BridgeConfig.load(layers) } catch let error as ConfigLayers.ConfigError {
            throw ValidationError(error.description)
        }
        do { _ = try WaymarkLogging.bootstrap(level: settings.logLevel) } catch let error as ConfigLayers.ConfigError {
            throw ValidationError("log.level: \(error.description)")
        }
        let logger = Logger(label: "waymark.bridge")
        let site = try loadSiteOrExit(settings.sitePath)
        guard !site.foreignGateways.isEmpty else {
            printError("\(settings.sitePath): foreign_gateways: the site file maps no foreign receiver; add entries such as `- {gateway: gw-lobby, espresense: lobby}` (docs/foreign-gateways.md)")
            throw ExitCode(1)
        }
        if site.tracking.pseudonymous && (settings.pseudonymSecret ?? site.tracking.pseudonymSecret ?? "").utf8.count < 16 {
            printError("pseudonym_secret: the site tracks pseudonymously and needs a secret of at least 16 characters (WAYMARK_BRIDGE_PSEUDONYM_SECRET or tracking.pseudonym_secret)")
            throw ExitCode(1)
        }
        let registry = PrometheusCollectorRegistry()
        let service = try BridgeService(config: settings, site: site, logger: logger, registry: registry)
        try ServiceLaunch.run(logger: logger, registry: registry, metricsHost: settings.metricsHost, metricsPort: settings.metricsPort,
                              stop: { service.stop() }, run: { try service.run() })
    }
}
