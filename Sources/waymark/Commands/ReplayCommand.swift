import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkFusion

/// `waymark replay`: the aggregator's fusion engine, offline, over a sightings JSONL file.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the fusion engine over a sightings file and write states, locations, visits, monitored sets and journeys as JSONL.",
        discussion: """
        Input: one JSON object per line, {"t": <Unix seconds or ISO-8601>, "gateway": "<id>", "device": "<id>", \
        "rssi": <dBm>, "tx": <dBm, optional>}; gateway outages as {"t": …, "gateway": "<id>", "status": "offline"|"online"}. \
        Lines may be out of time order by up to --reorder-window seconds; they are sorted within that window, and \
        lines of the same time go to the engine in the site file's gateway order (as the aggregator fuses them), so \
        the order a file lists one moment's gateways in changes nothing. Lines later than that, and malformed lines, are reported on stderr with their line number and skipped. \
        With --sort the whole input is read first and fused in time order, whatever its disorder: for a recording \
        pieced together from several gateways, or one in which a gateway's spool caught up after an outage.
        Output lines: state, live, location, visit, monitored, journey (and transition with --transitions), each \
        with type, t (the time of the evidence, Unix seconds) and device, in processing order. `live` is the \
        tracker's live region with its confidence (published at once); `location`, `visit` and `transition` are \
        the recorded history, decided fusion.smoothing_lag_s later (docs/fusion.md). With notification rules in \
        the site file, `notification` lines follow the outputs that caused them, exactly as the aggregator sends \
        them (same ids; docs/notifications.md). The summary on stderr ends with what the engine's self-calibration \
        learned and the notifications sent and held back.
        """)

    @Option(help: "The site file (YAML).") var site: String
    @Option(help: "The sightings file (JSONL); '-' for standard input.") var input: String
    @Option(help: "Where to write the output JSONL (default: standard output).") var output: String?
    @Option(help: "Seconds of input disorder to repair by sorting.") var reorderWindow: Double = 5
    @Flag(help: "Read the whole input before fusing and order all of it by time (instead of --reorder-window); holds the input in memory.")
    var sort = false
    @Flag(help: "Also write transition lines.") var transitions = false
    @Flag(help: "The input holds edge batches (one SightingBatch per line, as `waymark simulate --batches` writes them): the engine is fed exactly as waymark-aggregator feeds it, one weighted reading per device, gateway and window.")
    var batches = false
    @Option(help: "Fusion workers, as the aggregator's fusion.workers (devices split by a fixed hash of their id; each worker calibrates itself from its own devices, so the results depend on the count). Give the aggregator's count to reproduce what it recorded.")
    var workers: Int = 1

    func run() throws {
        let loaded = try loadSiteOrExit(site)
        guard reorderWindow >= 0, reorderWindow.isFinite else {
            throw ValidationError("--reorder-window must be zero or a positive number of seconds")
        }
        guard (1...64).contains(workers) else { throw ValidationError("--workers must be 1 … 64") }
        guard let reader = LineReader(path: input) else {
            printError("\(input): cannot open the sightings file")
            throw ExitCode(1)
        }
        let writer: OutputWriter
        if let output {
            guard let w = OutputWriter(path: output) else { printError("\(output): cannot create the output file"); throw ExitCode(1) }
            writer = w
        } else {
            writer = OutputWriter(handle: .standardOutput)
        }
        var replay = Replay(site: loaded, inputName: input, reorderWindow: sort ? .infinity : reorderWindow, includeTransitions: transitions, writer: writer,
                            workers: workers)
        replay.read(reader, batches: batches)
        try replay.finish()
        writer.flush()
        printError(replay.summaryText(input: input, batches: batches))
    }

    /// What is wrong with a line that did not parse.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let e as ReplayInputError: e.message
        case DecodingError.keyNotFound(let key, _): "not an edge batch ({\"v\":1,\"gateway\",\"boot\",\"seq\",\"start\",\"end\",\"sightings\":[…]}): missing '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c), DecodingError.dataCorrupted(let c):
            "not an edge batch: " + (c.codingPath.isEmpty ? c.debugDescription
                : "'\(c.codingPath.map(\.stringValue).joined(separator: "."))': \(c.debugDescription)")
        default: "\(error)"
        }
    }
}
