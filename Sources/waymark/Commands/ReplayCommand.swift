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
        the order a file lists one moment's gateways in changes nothing. A file more out of order than that (files \
        of several gateways joined, a gateway's backlog sent late) is read whole and fused in time order, with a \
        note on stderr; --sort does so always. On standard input, lines later than the window are reported on \
        stderr with their line number and skipped; malformed lines are, everywhere.
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
    @Flag(help: "Read the whole input before fusing and order all of it by time (instead of --reorder-window), standard input too; holds the input in memory. A file more out of order than --reorder-window is read so without it.")
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
        var window = sort ? .infinity : reorderWindow
        // A file out of order by more than the window would lose every line behind it: read a
        // file so whole instead. Only a regular file can be read twice: standard input, a pipe or
        // /dev/stdin keep the window, and their late lines are reported.
        var status = stat()
        let regular = input != "-" && stat(input, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG  // follows symbolic links
        if !sort, regular, let probe = LineReader(path: input) {
            let disorder = Replay.disorder(of: probe, batches: batches)
            if disorder > reorderWindow {
                printError("\(input): its \(batches ? "batches" : "lines") are up to \(String(format: "%.0f", disorder.rounded(.up))) s out of time order, "
                           + "more than --reorder-window \(reorderWindow) s (files of several gateways joined, or a gateway's backlog sent late): "
                           + "reading it whole and fusing it in time order, as --sort does")
                window = .infinity
            }
        }
        var replay = Replay(site: loaded, inputName: input, reorderWindow: window, includeTransitions: transitions, writer: writer,
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
