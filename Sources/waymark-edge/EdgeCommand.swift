import ArgumentParser
import Foundation
import WaymarkEdge

/// `waymark-edge`: the gateway agent (`run`, the default) and the adapter check (`scan`).
@main
struct EdgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waymark-edge",
        abstract: "The Waymark gateway agent: scan BLE adverts, batch tracked devices, spool and publish over MQTT.",
        discussion: """
        `waymark-edge [run] OPTIONS` runs the agent (run is the default subcommand); \
        `waymark-edge scan` prints what an adapter hears, as JSON lines (a diagnostic).
        """,
        subcommands: [EdgeRunCommand.self, ScanCommand.self],
        defaultSubcommand: EdgeRunCommand.self)
}

/// `waymark-edge run`: the agent. Every option is also a config-file key and an environment
/// variable (`WAYMARK_EDGE_<KEY>`); flags win over the environment, which wins over the file.
struct EdgeRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Scan BLE adverts (or replay a capture), batch tracked devices per window, spool and publish over MQTT.",
        discussion: """
        Keys (file / WAYMARK_EDGE_* / flags): \(EdgeConfig.keys.joined(separator: ", ")).
        See deploy/edge.example.yaml and docs/edge.md.
        """)

    @Option(name: .long, help: "YAML configuration file (keys as in deploy/edge.example.yaml).")
    var config: String?
    @Option(name: .long, help: "Site file (site).")
    var site: String?
    @Option(name: .long, help: "This gateway's id in the site file (gateway).")
    var gateway: String?
    @Option(name: .long, help: "hci0, hci:AA:BB:CC:DD:EE:FF or replay:FILE (source).")
    var source: String?
    @Option(name: .long, help: "Broker URL, mqtt://HOST:PORT or mqtts://HOST:PORT (mqtt.url).")
    var broker: String?
    @Option(name: .long, help: "Replay speed: 1 recorded, 0 as fast as possible (replay.rate).")
    var rate: String?
    @Option(name: .long, help: "Window length in seconds (window_s).")
    var window: String?
    @Option(name: .long, help: "Spool directory (spool.dir).")
    var spoolDir: String?
    @Option(name: .long, help: "Prometheus port, 0 = off (metrics.port).")
    var metricsPort: String?
    @Option(name: .long, help: "trace, debug, info, notice, warning, error (log.level).")
    var logLevel: String?
    @Option(name: [.customLong("set")], parsing: .singleValue, help: "Any key: --set spool.max_bytes=1048576 (repeatable).")
    var settings: [String] = []
    @Flag(name: .long, help: "After a replay, exit once every batch is acknowledged by the broker (replay.exit_when_done).")
    var exitWhenDone = false
    @Flag(name: .long, help: "Print the effective settings (secrets masked) and exit.")
    var printConfig = false

    func run() async throws {
        var flags: [String: String] = [:]
        for (key, value) in [("site", site), ("gateway", gateway), ("source", source), ("mqtt.url", broker),
                             ("replay.rate", rate), ("window_s", window), ("spool.dir", spoolDir),
                             ("metrics.port", metricsPort), ("log.level", logLevel)] {
            if let value { flags[key] = value }
        }
        if exitWhenDone { flags["replay.exit_when_done"] = "true" }
        for setting in settings {
            guard let eq = setting.firstIndex(of: "=") else {
                throw ValidationError("--set needs KEY=VALUE, got '\(setting)'")
            }
            flags[String(setting[..<eq])] = String(setting[setting.index(after: eq)...])
        }
        do {
            try await EdgeApplication.run(configFile: config, flags: flags, printConfig: printConfig)
        } catch let error as ValidationError {
            throw error
        } catch {
            FileHandle.standardError.write(Data("waymark-edge: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
