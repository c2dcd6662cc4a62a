import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkSimulation

/// `waymark evaluate`: scores `waymark replay` output against the simulator's ground truth, next
/// to the naive strongest-gateway rule.
struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Score replay output against ground truth, side by side with the naive strongest-RSSI rule.",
        discussion: """
        Figures: time-weighted current-region accuracy (exact and within one graph hop) over the time \
        devices are truly in a region; visit recall and precision (a visit matches a true visit of the same \
        device and region when their intervals overlap); path accuracy (1 − mean normalised edit distance \
        between true and recorded region sequences); entry and exit latency p50/p95; flaps (changes to a \
        region the device was not in within 10 s) per device-hour, and how many of them came while the device \
        was truly between regions, truly in another region, or a stationary device's. With --sightings, the \
        same figures for the naive rule "region of the gateway with the strongest RSSI in the last 2 s" (the \
        sightings read in time order, whatever order the file holds them in, as `waymark replay` reads a file).
        """)

    @Option(help: "The site file (YAML).") var site: String
    @Option(help: "Ground truth from `waymark simulate --truth` (JSONL).") var truth: String
    @Option(help: "Output of `waymark replay` (JSONL).") var output: String
    @Option(help: "The sightings file the replay ran on, to score the naive baseline too.") var sightings: String?
    @Flag(help: "Print the report as JSON.") var json = false

    func run() throws {
        let loaded = try loadSiteOrExit(site)
        var reader = EvaluationReader(site: loaded)
        let truthData: TruthData
        let waymarkRun: RecordedRun
        var naiveRun: RecordedRun? = nil
        do {
            truthData = try reader.readTruth(path: truth)
            guard truthData.visits.contains(where: { !$0.isEmpty }) else {
                printError("\(truth): no truth lines; pass the file written by `waymark simulate --truth`")
                throw ExitCode(1)
            }
            waymarkRun = try reader.readReplayOutput(path: output)
            if let sightings { naiveRun = try reader.readNaive(sightingsPath: sightings) }
        } catch let e as EvaluationInputError {
            printError(e.description)
            throw ExitCode(1)
        }
        for p in reader.problems { printError(p) }
        if reader.problemCount > reader.problems.count {
            printError("… and \(reader.problemCount - reader.problems.count) more unusable lines")
        }
        for (region, n) in reader.unknownRegions.sorted(by: { $0.key < $1.key }) {
            printError("warning: region '\(region)' (\(n) lines) is not in \(site); scored as wrong")
        }
        var truthData2 = truthData
        truthData2.ensureDevices(reader.devices.count)
        let evaluator = Evaluator(site: loaded)
        let report = EvaluationReport(
            waymark: evaluator.score(truth: truthData2, run: waymarkRun),
            naive: naiveRun.map { evaluator.score(truth: truthData2, run: $0) },
            devices: truthData.presence.filter { !$0.isEmpty }.count,
            trueVisits: truthData.visits.reduce(0) { $0 + $1.count },
            deviceHours: truthData.deviceHours,
            exitDelayS: loaded.fusion.exitDelayS)
        print(json ? report.json() : report.table())
    }
}
