import ArgumentParser
import Foundation
import Logging
import Prometheus
import WaymarkService

/// `waymark homeassistant`: Waymark's device states as Home Assistant entities over MQTT discovery
/// (docs/home-assistant.md).
struct HomeAssistantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homeassistant",
        abstract: "Publish Home Assistant MQTT discovery for chosen devices, the regions and the gateways.",
        discussion: """
            Follows the aggregator's retained device states and publishes, for Home Assistant's MQTT \
            discovery: per allow-listed device a sensor whose state is its current region's name \
            (not_home in none) with distance, proximity, confidence and floor as attributes; per \
            region an occupancy sensor; per gateway and for the aggregator a connectivity sensor. No \
            device is published unless it is in `devices`. Entities of devices, regions or gateways \
            no longer configured are removed at start. Settings come from flags, then \
            WAYMARK_HOMEASSISTANT_<KEY> environment variables, then the --config YAML file (see \
            deploy/homeassistant.example.yaml), then defaults.
            """)

    @Option(help: "YAML configuration file (see deploy/homeassistant.example.yaml).") var config: String?
    @Option(help: "The site file (key: site).") var site: String?
    @Option(help: ArgumentHelp("MQTT broker URL, mqtt://HOST:PORT or mqtts://… (key: mqtt.url).", valueName: "url")) var broker: String?
    @Option(help: ArgumentHelp("A device to publish, DEVICE_ID or DEVICE_ID=Name (key: devices; repeatable).", valueName: "device"))
    var device: [String] = []
    @Option(help: ArgumentHelp("Metrics port, 0 = off (key: metrics.port).", valueName: "port")) var metricsPort: Int?
    @Option(help: ArgumentHelp("Any key as KEY=VALUE, e.g. --set discovery_prefix=ha (repeatable).", valueName: "key=value"))
    var set: [String] = []
    @Flag(help: "Print the effective settings (secrets masked) and exit.") var printConfig = false

    func run() throws {
        var named: [String: String] = [:]
        if let site { named["site"] = site }
        if let broker { named["mqtt.url"] = broker }
        if let metricsPort { named["metrics.port"] = String(metricsPort) }
        if !device.isEmpty { named["devices"] = device.joined(separator: ",") }
        let layers = try ServiceLaunch.layers(configFile: config, envPrefix: "WAYMARK_HOMEASSISTANT", named: named, set: set,
                                              knownKeys: HomeAssistantConfig.keys)
        if printConfig {
            for line in layers.describe(secretKeys: HomeAssistantConfig.secretKeys) { print(line) }
            return
        }
        let settings: HomeAssistantConfig
        do { settings = try HomeAssistantConfig.load(layers) } catch let error as ConfigLayers.ConfigError {
            throw ValidationError(error.description)
        }
        do { _ = try WaymarkLogging.bootstrap(level: settings.logLevel) } catch let error as ConfigLayers.ConfigError {
            throw ValidationError("log.level: \(error.description)")
        }
        let logger = Logger(label: "waymark.homeassistant")
        let site = try loadSiteOrExit(settings.sitePath)
        if settings.devices.isEmpty {
            logger.notice("no devices allow-listed: only regions and gateways are published (add `devices:` to publish a device's region)")
        }
        let registry = PrometheusCollectorRegistry()
        let service = try HomeAssistantService(config: settings, site: site, logger: logger, registry: registry)
        try ServiceLaunch.run(logger: logger, registry: registry, metricsHost: settings.metricsHost, metricsPort: settings.metricsPort,
                              stop: { service.stop() }, run: { try service.run() })
    }
}
