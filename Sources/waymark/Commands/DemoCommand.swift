import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkSimulation

/// `waymark demo`: the whole pipeline on this machine against a broker and a database it is
/// given (scripts/demo.sh starts private ones): migrate, simulate the example venue, run its
/// gateways as real `waymark-edge` processes replaying what they would have heard, run
/// `waymark-aggregator`, then print the foot-traffic report, the accuracy against the ground truth
/// and where the map is.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the example venue end to end: simulated gateways → waymark-edge → MQTT → waymark-aggregator → PostgreSQL → reports.",
        discussion: """
        Usually started by scripts/demo.sh, which installs what is missing, builds, and starts a private \
        Mosquitto and PostgreSQL. Every gateway of the site runs as its own waymark-edge process with \
        --source replay:FILE (the sightings the simulator says it heard) at --speedup times real time; \
        the simulated period ends about when the replay does, so the aggregator sees plausible gateway \
        clocks. Ctrl-C stops every process the demo started.
        """)

    @Option(help: "Working directory for the simulated files, spools, logs and the map.") var work: String
    @Option(help: "MQTT broker URL (default $WAYMARK_MQTT_URL).") var mqtt: String?
    @Option(help: "PostgreSQL URL (default $WAYMARK_DATABASE_URL).") var database: String?
    @Option(help: "The site file (default deploy/examples/museum.yaml).") var site: String?
    @Option(help: "Number of simulated devices.") var devices: Int = 100
    @Option(help: "Simulated period, e.g. 5m, 30m, 2h.") var duration: String = "20m"
    @Option(help: "Replay speed: simulated seconds per real second.") var speedup: Double = 30
    @Option(help: "Random seed of the simulation.") var seed: UInt64 = 1
    @Option(help: "Seconds of the live-latency measurement at real time after the reports (0 skips it).")
    var liveSeconds: Int = 30
    @Option(help: "Folder with waymark-edge and waymark-aggregator (default: next to this program).") var bin: String?
    @Flag(help: "The caller removes --work when the demo ends (scripts/demo.sh without --keep): the closing lines say so instead of pointing into it.")
    var temporaryWork = false

    func run() throws {
        let env = ProcessInfo.processInfo.environment
        guard let mqttURL = mqtt ?? env["WAYMARK_MQTT_URL"], !mqttURL.isEmpty else {
            throw ValidationError("no broker: pass --mqtt mqtt://HOST:PORT or set WAYMARK_MQTT_URL (scripts/demo.sh starts one)")
        }
        guard let databaseURL = database ?? env["WAYMARK_DATABASE_URL"], !databaseURL.isEmpty else {
            throw ValidationError("no database: pass --database postgresql://USER@HOST:PORT/DB or set WAYMARK_DATABASE_URL")
        }
        guard let seconds = DurationText.seconds(duration), seconds >= 60 else {
            throw ValidationError("--duration '\(duration)' must be a duration of at least a minute, e.g. 5m, 30m or 2h")
        }
        guard devices >= 1 && devices <= 100_000 else { throw ValidationError("--devices must be between 1 and 100000") }
        guard speedup >= 1 && speedup <= 1000 else { throw ValidationError("--speedup must be between 1 and 1000") }
        guard liveSeconds >= 0 && liveSeconds <= 3600 else { throw ValidationError("--live-seconds must be between 0 (skip) and 3600") }
        let sitePath = site ?? Self.defaultSite()
        let loaded = try loadSiteOrExit(sitePath)
        let waymark = Self.executablePath()
        let binDirectory = bin ?? URL(fileURLWithPath: waymark).deletingLastPathComponent().path
        for tool in ["waymark-edge", "waymark-aggregator"] where !FileManager.default.isExecutableFile(atPath: "\(binDirectory)/\(tool)") {
            printError("waymark demo: \(binDirectory)/\(tool) is missing; build it with `swift build -c release` (scripts/demo.sh does)")
            throw ExitCode(1)
        }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let run = DemoRun(
            site: loaded, sitePath: sitePath, work: URL(fileURLWithPath: work).standardizedFileURL.path,
            mqttURL: mqttURL, databaseURL: databaseURL, waymark: waymark, binDirectory: binDirectory,
            devices: devices, durationS: seconds, durationText: duration, speedup: speedup, seed: seed,
            liveSeconds: liveSeconds, temporaryWork: temporaryWork)
        do {
            try run.execute()
        } catch let error as DemoError {
            printError("waymark demo: \(error.description)")
            throw ExitCode(1)
        } catch is DemoRun.Interrupted {
            printError("waymark demo: interrupted; every process the demo started has been stopped")
            throw ExitCode(130)
        }
    }

    /// deploy/examples/museum.yaml in the current directory, else in the source tree this program
    /// was built from.
    static func defaultSite() -> String {
        let relative = "deploy/examples/museum.yaml"
        if FileManager.default.fileExists(atPath: relative) { return relative }
        // This file is Sources/waymark/Commands/DemoCommand.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(relative).path
    }

    /// This program's path (to run its subcommands and find the other programs next to it).
    static func executablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    }
}
