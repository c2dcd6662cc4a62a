import ArgumentParser
import Foundation
import Logging
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkService

/// `waymark-aggregator`: MQTT → fusion → PostgreSQL (docs/aggregator.md).
struct AggregatorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waymark-aggregator",
        abstract: "Fuse all gateways' sightings into device state, visits and journeys; publish to MQTT and store in PostgreSQL.",
        discussion: """
            Settings come from flags, then WAYMARK_AGGREGATOR_<KEY> environment variables (dots as \
            underscores, e.g. WAYMARK_AGGREGATOR_DATABASE_URL), then the --config YAML file, then \
            defaults; every key is documented in deploy/aggregator.example.yaml. SIGTERM or SIGINT \
            commits and acks what was processed, then exits.
            """)

    @Option(help: "YAML configuration file (see deploy/aggregator.example.yaml).") var config: String?
    @Option(help: "The site file (key: site).") var site: String?
    @Option(help: ArgumentHelp("MQTT broker URL, mqtt://HOST:PORT or mqtts://… (key: mqtt.url).", valueName: "url")) var broker: String?
    @Option(help: ArgumentHelp("PostgreSQL URL (key: database.url); the password is never logged.", valueName: "url")) var database: String?
    @Option(help: ArgumentHelp("Metrics port, 0 = off (key: metrics.port).", valueName: "port")) var metricsPort: Int?
    @Option(help: ArgumentHelp("Any key as KEY=VALUE, e.g. --set database.flush_interval_ms=500 (repeatable).", valueName: "key=value"))
    var set: [String] = []
    @Flag(help: "Print the effective settings (secrets masked) and exit.") var printConfig = false

    func run() throws {
        var flags: [String: String] = [:]
        if let site { flags["site"] = site }
        if let broker { flags["mqtt.url"] = broker }
        if let database { flags["database.url"] = database }
        if let metricsPort { flags["metrics.port"] = String(metricsPort) }
        for item in set {
            guard let eq = item.firstIndex(of: "=") else {
                throw ValidationError("--set '\(item)': write KEY=VALUE, e.g. --set log.level=debug")
            }
            flags[String(item[..<eq])] = String(item[item.index(after: eq)...])
        }
        let settings: AggregatorConfig
        do {
            let layers = try ConfigLayers(filePath: config, envPrefix: "WAYMARK_AGGREGATOR", flags: flags, knownKeys: AggregatorConfig.keys)
            if printConfig {
                for line in layers.describe(secretKeys: AggregatorConfig.secretKeys.union(["database.url"])) { print(line) }
                return
            }
            settings = try AggregatorConfig.load(layers)
        } catch let error as ConfigLayers.ConfigError {
            throw ValidationError(error.description)
        }
        _ = try WaymarkLogging.bootstrap(level: settings.logLevel)
        let logger = Logger(label: "waymark.aggregator")
        let (site, warnings) = try loadSite(settings.sitePath)
        for w in warnings { logger.warning("\(w.description)") }
        let service = AggregatorService(config: settings, site: site, logger: logger)
        let signals = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                logger.notice("signal \(number): committing and stopping")
                service.stop()
            }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }
        do {
            try service.run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
    }

    func loadSite(_ path: String) throws -> (WaymarkCore.Site, [SiteDiagnostic]) {
        do {
            return try SiteLoader.load(path: path)
        } catch {
            for d in error.diagnostics { FileHandle.standardError.write(Data("\(d.description)\n".utf8)) }
            throw ExitCode(1)
        }
    }
}

AggregatorCommand.main()
