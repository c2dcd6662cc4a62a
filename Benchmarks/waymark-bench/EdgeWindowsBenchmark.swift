import Foundation
import WaymarkAccuracy

/// `waymark-bench edge-windows [--windows 0.5,1,2,3,5,10] [--work DIR]`: what the edge's
/// `window_s` costs on real radio. The Kolakowski recordings (and the suite's "together" row) are
/// cut into edge batches of each window length (`EdgeWindows`), replayed as the aggregator is fed
/// (`waymark replay --batches`, default fusion parameters) and scored by `waymark evaluate`; the
/// first line is the single readings the accuracy suite feeds. docs/edge.md, "How long a window
/// may be". Replays with the `waymark` executable next to this one (or `$WAYMARK_BIN`).
enum EdgeWindowsBenchmark {
    static func run() {
        let repository = AccuracyBenchmark.repository
        let work = AccuracyBenchmark.value("--work") ?? repository + "/.build/edge-windows"
        let text = AccuracyBenchmark.value("--windows") ?? "0.5,1,2,3,5,10"
        let windows = text.split(separator: ",").compactMap { Double($0) }
        guard !windows.isEmpty, windows.allSatisfy({ $0 > 0 && $0.isFinite }) else {
            print("edge-windows: --windows needs seconds separated by commas, e.g. 0.5,1,2,5; got '\(text)'")
            exit(1)
        }
        do {
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let runner = try ReplayRunner.locate(repository: repository), waymark = runner.executable
            let site = work + "/kolakowski-flat.geometry.yaml"
            _ = try GeometrySite.write(from: repository + "/deploy/examples/kolakowski-flat.yaml", to: site)
            var inputs: [(name: String, sightings: String, truth: String)] = []
            var recordings: [KolakowskiRecording] = []
            for name in AccuracySuite.recordings {
                let recording = try KolakowskiRecording(name: name, directory: work + "/kolakowski", dataset: AccuracyBenchmark.kolakowski,
                                                        repository: repository)
                let truth = "\(work)/\(name).visits.jsonl"
                try recording.writeVisitTruth(to: truth)
                recordings.append(recording)
                inputs.append((name, recording.sightingsPath, truth))
            }
            let truth = "\(work)/\(KolakowskiTogether.name).visits.jsonl"
            let together = try KolakowskiTogether(recordings: recordings, directory: work + "/kolakowski", truthPath: truth)
            inputs.append((KolakowskiTogether.name, together.sightingsPath, truth))

            func exact(_ output: String, truth: String) throws -> Double {
                guard let e = try runner.evaluate(site: site, truth: truth, output: output)["current_region_accuracy"] else {
                    throw AccuracyError("\(output).score: no current_region_accuracy")
                }
                return e
            }
            print("exact % (waymark replay, default fusion parameters), " + inputs.map(\.name).joined(separator: " / "))
            print("| input | " + inputs.map(\.name).joined(separator: " | ") + " |")
            print("|---|" + String(repeating: "---:|", count: inputs.count))
            var cells: [String] = []
            for input in inputs {
                let out = "\(work)/\(input.name).readings.jsonl"
                try ReplayRunner.run(waymark, ["replay", "--site", site, "--input", input.sightings, "--output", out], log: out + ".log")
                cells.append(String(format: "%.1f", 100 * (try exact(out, truth: input.truth))))
            }
            print("| single readings | " + cells.joined(separator: " | ") + " |")
            for w in windows {
                cells = []
                for input in inputs {
                    let stem = "\(work)/\(input.name).w\(w)"
                    try EdgeWindows.write(sightings: input.sightings, to: stem + ".batches.jsonl", windowS: w)
                    try ReplayRunner.run(waymark, ["replay", "--batches", "--site", site, "--input", stem + ".batches.jsonl",
                                                   "--output", stem + ".jsonl"], log: stem + ".log")
                    cells.append(String(format: "%.1f", 100 * (try exact(stem + ".jsonl", truth: input.truth))))
                }
                print("| window_s \(w) | " + cells.joined(separator: " | ") + " |")
            }
        } catch {
            print("edge-windows: \(error)")
            if CommandLine.arguments.dropFirst().first == "edge-windows" { exit(1) }
        }
    }
}
