import Foundation
import WaymarkAccuracy
import WaymarkCore

/// `waymark-bench accuracy [--short] [--json] [--seed N] [--stagger S] [--work DIR]`: the accuracy
/// suite (docs/accuracy.md), run from the repository root. `--seed` changes the simulated venues'
/// seed (default 1, the reported table): develop on another seed, report on seed 1. `--stagger`
/// sets the seconds between the tags' starts in the "kolakowski together" row (default 7.3). Replays with the `waymark` executable next to this one (build it
/// with `swift build -c release --product waymark`, or use scripts/accuracy.sh).
/// `waymark-bench radio-validate [--seeds N]`: the same-geometry validation of the indoor radio.
enum AccuracyBenchmark {
    static var arguments: [String] { Array(CommandLine.arguments.dropFirst(2)) }

    static func value(_ flag: String) -> String? {
        guard let i = arguments.firstIndex(of: flag), i + 1 < arguments.count else { return nil }
        return arguments[i + 1]
    }

    static var repository: String { FileManager.default.currentDirectoryPath }

    static var kolakowski: String {
        if let env = ProcessInfo.processInfo.environment["WAYMARK_KOLAKOWSKI"], !env.isEmpty { return env }
        return URL(fileURLWithPath: repository + "/../shared/data/kolakowski-ble-rss-fingerprints-calib2021").standardized.path
    }

    static func run() {
        let short = arguments.contains("--short")
        let json = arguments.contains("--json")
        let work = value("--work") ?? repository + (short ? "/.build/accuracy-short" : "/.build/accuracy")
        do {
            var options = AccuracySuite.Options(repository: repository, work: work, kolakowski: kolakowski, short: short)
            if let text = value("--seed") {
                guard let seed = UInt64(text), seed > 0 else {
                    print("accuracy: --seed needs a positive whole number, got '\(text)'")
                    exit(1)
                }
                options.seed = seed
            }
            if let text = value("--stagger") {
                guard let stagger = Double(text), stagger >= 0, stagger.isFinite else {
                    print("accuracy: --stagger needs seconds (0 or more), got '\(text)'")
                    exit(1)
                }
                options.togetherStaggerS = stagger
            }
            let suite = AccuracySuite(options: options, replay: try ReplayRunner.locate(repository: repository))
            let began = ContinuousClock.now
            let rows = try suite.run { line in
                FileHandle.standardError.write(Data("accuracy: \(line)\n".utf8))
            }
            let routes = try suite.runRoutes { line in
                FileHandle.standardError.write(Data("accuracy: \(line)\n".utf8))
            }
            let took = (ContinuousClock.now - began).seconds
            if json { print(AccuracySuite.json(rows, routes: routes)) } else {
                print(AccuracySuite.table(rows))
                print(AccuracySuite.routeTable(routes))
                print(String(format: "accuracy: %d rows and %d route rows in %.0f s (replay: %@; files in %@)", rows.count, routes.count, took, suite.replay.executable, work))
            }
        } catch {
            print("accuracy: \(error)")
            if CommandLine.arguments.dropFirst().first == "accuracy" { exit(1) }
        }
    }

    static func validate() {
        let work = value("--work") ?? repository + "/.build/radio-validate"
        do {
            var validation = try RadioValidation(repository: repository, work: work, kolakowski: kolakowski)
            if let n = value("--seeds").flatMap(UInt64.init), n > 0 { validation.seeds = Array(1...n) }
            var results: [RadioValidation.Result] = []
            for name in AccuracySuite.recordings {
                let recording = try KolakowskiRecording(name: name, directory: work + "/kolakowski", dataset: kolakowski, repository: repository)
                results.append(try validation.validate(recording, work: work))
            }
            print(RadioValidation.report(results, profile: validation.profile, seeds: validation.seeds.count))
            print("test-robot is held out (the fit used the calibration run only).")
            // Exit status 2 when a tolerance is missed (not under `all`, which runs on).
            if !results.allSatisfy(\.passes) && CommandLine.arguments.dropFirst().first == "radio-validate" { exit(2) }
        } catch {
            print("radio-validate: \(error)")
            if CommandLine.arguments.dropFirst().first == "radio-validate" { exit(1) }
        }
    }
}
