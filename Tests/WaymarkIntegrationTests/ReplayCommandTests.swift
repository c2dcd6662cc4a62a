import Foundation
import Testing
import WaymarkCore

/// `waymark simulate` → `waymark replay` → `waymark evaluate` as a user runs them: the built
/// binary, real files, exit statuses, stderr diagnostics.
@Suite("waymark replay and evaluate (CLI)")
struct ReplayCommandTests {
    static let repo = DeployEnvironment.repositoryRoot

    @Test("replay reads every sighting, skips a bad line with its number, and evaluate scores the output")
    func replayAndEvaluate() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("replay-cli")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = Self.repo.appendingPathComponent("deploy/examples/museum.yaml").path
        let sightings = dir.appendingPathComponent("s.jsonl").path, truth = dir.appendingPathComponent("t.jsonl").path
        let sim = try AggregatorProcesses.run([waymark, "simulate", "--site", site, "--devices", "6", "--duration", "10m",
                                               "--seed", "11", "--sightings", sightings, "--truth", truth, "--quiet"])
        #expect(sim.status == 0, "\(sim.output)")

        // A malformed line in the middle: reported with its line number, skipped, nothing else lost.
        var lines = try String(contentsOfFile: sightings, encoding: .utf8).split(separator: "\n").map(String.init)
        let good = lines.count
        lines.insert(#"{"t": 1780304400, "gateway": "gw-lobby", "rssi": -70}"#, at: 100)
        try (lines.joined(separator: "\n") + "\n").write(toFile: sightings, atomically: true, encoding: .utf8)

        let output = dir.appendingPathComponent("o.jsonl").path
        let replay = try AggregatorProcesses.run([waymark, "replay", "--site", site, "--input", sightings, "--output", output])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.output.contains("s.jsonl:101: missing 'device'"), "\(replay.output)")
        #expect(replay.output.contains("\(good) sightings, 0 status lines, 1 bad lines, 0 late lines"), "\(replay.output)")

        // Every output line is one of the documented types, with the time of its evidence.
        let records = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let types = Set(records.compactMap { $0["type"] as? String })
        // The example museum has notification rules (docs/notifications.md): their lines too.
        #expect(types.isSubset(of: ["state", "location", "live", "visit", "monitored", "journey", "notification"]), "\(types)")
        #expect(types.isSuperset(of: ["state", "location", "live", "visit", "journey"]), "\(types)")
        #expect(records.allSatisfy { ($0["t"] as? Double).map { $0 > 1.7e9 } ?? false })
        #expect(Set(records.compactMap { $0["device"] as? String }).count == 6)

        let evaluate = try AggregatorProcesses.run([waymark, "evaluate", "--site", site, "--truth", truth,
                                                    "--output", output, "--sightings", sightings, "--json"])
        #expect(evaluate.status == 0, "\(evaluate.output)")
        let jsonText = String(evaluate.output[evaluate.output.firstIndex(of: "{")!...])
        let report = try #require(JSONSerialization.jsonObject(with: Data(jsonText.utf8)) as? [String: Any])
        let waymarkScores = try #require(report["waymark"] as? [String: Any])
        #expect(report["devices"] as? Int == 6)
        for key in ["current_region_accuracy", "visit_recall", "visit_precision", "path_accuracy"] {
            let v = try #require(waymarkScores[key] as? Double, "\(key) missing")
            #expect(v > 0.5 && v <= 1, "\(key) = \(v)")
        }
        #expect(report["naive"] is [String: Any], "no naive baseline next to Waymark: \(report.keys)")
    }

    @Test("replay --batches feeds the engine the edge batches as the aggregator does; duplicates and bad lines are reported")
    func replayBatches() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("replay-batches")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = Self.repo.appendingPathComponent("deploy/examples/museum.yaml").path
        let path = { (name: String) in dir.appendingPathComponent(name).path }
        let sim = try AggregatorProcesses.run([waymark, "simulate", "--site", site, "--devices", "5", "--duration", "10m", "--seed", "12",
                                               "--sightings", path("s.jsonl"), "--truth", path("t.jsonl"), "--batches", path("b.jsonl"),
                                               "--duplicate-rate", "0.05", "--quiet"])
        #expect(sim.status == 0, "\(sim.output)")
        var lines = try String(contentsOfFile: path("b.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
        let unique = Set(lines).count
        let entries = try Set(lines).reduce(0) { $0 + (try JSONDecoder().decode(SightingBatch.self, from: Data($1.utf8))).sightings.count }
        lines.insert(#"{"v": 1, "gateway": "gw-lobby"}"#, at: 10)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path("b.jsonl"), atomically: true, encoding: .utf8)

        let replay = try AggregatorProcesses.run([waymark, "replay", "--batches", "--site", site, "--input", path("b.jsonl"), "--output", path("o.jsonl")])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.output.contains("b.jsonl:11: not an edge batch"), "\(replay.output)")
        #expect(replay.output.contains("\(unique) batches with \(entries) entries, \(lines.count - 1 - unique) duplicates dropped, 1 bad lines"),
                "\(replay.output)")
        let evaluate = try AggregatorProcesses.run([waymark, "evaluate", "--site", site, "--truth", path("t.jsonl"), "--output", path("o.jsonl"), "--json"])
        #expect(evaluate.status == 0, "\(evaluate.output)")
        let report = try #require(JSONSerialization.jsonObject(with: Data(String(evaluate.output[evaluate.output.firstIndex(of: "{")!...]).utf8)) as? [String: Any])
        let accuracy = try #require((report["waymark"] as? [String: Any])?["current_region_accuracy"] as? Double)
        #expect(accuracy > 0.5 && accuracy <= 1, "\(accuracy)")

        // As an aggregator with two fusion workers (`fusion.workers: 2`): the same output on every
        // run, as accurate; a count out of range is refused with the option's name.
        for name in ["w2a.jsonl", "w2b.jsonl"] {
            let run = try AggregatorProcesses.run([waymark, "replay", "--batches", "--workers", "2", "--site", site, "--input", path("b.jsonl"),
                                                   "--output", path(name)])
            #expect(run.status == 0, "\(run.output)")
        }
        let two = try Data(contentsOf: URL(fileURLWithPath: path("w2a.jsonl")))
        let twoAgain = try Data(contentsOf: URL(fileURLWithPath: path("w2b.jsonl")))
        #expect(two.count > 1000 && two == twoAgain)
        let scored = try AggregatorProcesses.run([waymark, "evaluate", "--site", site, "--truth", path("t.jsonl"), "--output", path("w2a.jsonl"), "--json"])
        let twoReport = try #require(JSONSerialization.jsonObject(with: Data(String(scored.output[scored.output.firstIndex(of: "{")!...]).utf8)) as? [String: Any])
        let twoAccuracy = try #require((twoReport["waymark"] as? [String: Any])?["current_region_accuracy"] as? Double)
        #expect(abs(twoAccuracy - accuracy) < 0.1, "one worker \(accuracy), two \(twoAccuracy)")
        let refused = try AggregatorProcesses.run([waymark, "replay", "--batches", "--workers", "0", "--site", site, "--input", path("b.jsonl")])
        #expect(refused.status != 0 && refused.output.contains("--workers"), "\(refused.output)")
    }

    @Test("a file whose times are milliseconds is refused line by line with the fix, twenty lines shown, all counted")
    func millisecondTimes() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("replay-cli-ms")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = Self.repo.appendingPathComponent("deploy/examples/museum.yaml").path
        let sightings = dir.appendingPathComponent("ms.jsonl").path
        // 50 sightings stamped in milliseconds (as many loggers write them), one in seconds.
        var lines = (0..<50).map { #"{"t": \#(1_780_304_400_000 + $0 * 500), "gateway": "gw-lobby", "device": "mac:02-00-00-00-00-01", "rssi": -60}"# }
        lines.append(#"{"t": 1780304430, "gateway": "gw-lobby", "device": "mac:02-00-00-00-00-01", "rssi": -60}"#)
        try (lines.joined(separator: "\n") + "\n").write(toFile: sightings, atomically: true, encoding: .utf8)
        let replay = try AggregatorProcesses.run([waymark, "replay", "--site", site, "--input", sightings,
                                                  "--output", dir.appendingPathComponent("o.jsonl").path])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.output.contains("ms.jsonl:1: 't' 1780304400000.0 is not Unix seconds"), "\(replay.output)")
        #expect(replay.output.contains("milliseconds since 1970: divide it by 1,000; line skipped"), "\(replay.output)")
        #expect(replay.output.contains("ms.jsonl:20: ") && !replay.output.contains("ms.jsonl:21: "), "\(replay.output)")
        #expect(replay.output.contains("only the first 20 are shown"), "\(replay.output)")
        #expect(replay.output.contains("1 sightings, 0 status lines, 50 bad lines"), "\(replay.output)")
    }

    @Test("a file pieced together gateway by gateway is fused exactly as the time-ordered file; on standard input, with --sort")
    func sortWholeFile() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("replay-cli-sort")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = Self.repo.appendingPathComponent("deploy/examples/museum.yaml").path
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        let sim = try AggregatorProcesses.run([waymark, "simulate", "--site", site, "--devices", "4", "--duration", "5m",
                                               "--seed", "13", "--sightings", path("s.jsonl"), "--quiet"])
        #expect(sim.status == 0, "\(sim.output)")
        // Each gateway's lines after the previous gateway's, as files gathered per gateway are joined
        // (or a gateway's spool caught up after an outage): each gateway's lines keep their order.
        let lines = try String(contentsOfFile: path("s.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
        func gateway(_ line: String) -> String {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["gateway"] as? String ?? ""
        }
        let order = lines.map(gateway).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        #expect(order.count >= 3, "\(order)")
        let grouped = order.flatMap { g in lines.filter { gateway($0) == g } }
        try (grouped.joined(separator: "\n") + "\n").write(toFile: path("grouped.jsonl"), atomically: true, encoding: .utf8)

        let reference = try AggregatorProcesses.run([waymark, "replay", "--site", site, "--input", path("s.jsonl"), "--output", path("ref.jsonl")])
        #expect(reference.status == 0 && reference.output.contains(" 0 late lines"), "\(reference.output)")
        let counts = try #require(reference.output.range(of: #"\d+ sightings, \d+ status lines, 0 bad lines, 0 late lines"#, options: .regularExpression),
                                  "\(reference.output)")
        // A file that out of order is read whole and fused in time order, with a note; --sort does so always.
        let noticed = try AggregatorProcesses.run([waymark, "replay", "--site", site, "--input", path("grouped.jsonl"), "--output", path("auto.jsonl")])
        #expect(noticed.status == 0 && noticed.output.contains(reference.output[counts]), "\(noticed.output)")
        #expect(noticed.output.contains("out of time order, more than --reorder-window 5.0 s") && noticed.output.contains("reading it whole"),
                "\(noticed.output)")
        #expect(!reference.output.contains("reading it whole"), "an ordered file is streamed: \(reference.output)")
        // The same through a symbolic link (as /etc/… files often are).
        try FileManager.default.createSymbolicLink(atPath: path("linked.jsonl"), withDestinationPath: path("grouped.jsonl"))
        let linked = try AggregatorProcesses.run([waymark, "replay", "--site", site, "--input", path("linked.jsonl"), "--output", path("linked-out.jsonl")])
        #expect(linked.status == 0 && linked.output.contains("reading it whole"), "\(linked.output)")
        let sorted = try AggregatorProcesses.run([waymark, "replay", "--sort", "--site", site, "--input", path("grouped.jsonl"), "--output", path("sorted.jsonl")])
        #expect(sorted.status == 0 && sorted.output.contains(reference.output[counts]), "\(sorted.output)")
        // Standard input cannot be read twice: beyond the window its lines are late, and the message says what to do.
        let piped = try AggregatorProcesses.run(["/bin/sh", "-c", "\"$0\" replay --site \"$1\" --input - --output \"$2\" < \"$3\"",
                                                 waymark, site, path("piped.jsonl"), path("grouped.jsonl")])
        #expect(piped.status == 0, "\(piped.output)")
        #expect(piped.output.contains("line skipped — run with --sort"), "\(piped.output)")
        #expect(!piped.output.contains(" 0 late lines"), "\(piped.output)")
        // A pipe given by path is read once, like standard input: nothing lost to a first pass.
        let fifo = try AggregatorProcesses.run(["/bin/sh", "-c", "\"$0\" replay --site \"$1\" --input /dev/stdin --output \"$2\" < \"$3\"",
                                                waymark, site, path("fifo.jsonl"), path("s.jsonl")])
        #expect(fifo.status == 0 && fifo.output.contains(reference.output[counts]), "\(fifo.output)")
        let catted = try AggregatorProcesses.run(["/bin/sh", "-c", "cat \"$3\" | \"$0\" replay --site \"$1\" --input /dev/stdin --output \"$2\"",
                                                  waymark, site, path("catted.jsonl"), path("s.jsonl")])
        #expect(catted.status == 0 && catted.output.contains(reference.output[counts]), "\(catted.output)")
        let pipedSorted = try AggregatorProcesses.run(["/bin/sh", "-c", "\"$0\" replay --sort --site \"$1\" --input - --output \"$2\" < \"$3\"",
                                                       waymark, site, path("piped-sorted.jsonl"), path("grouped.jsonl")])
        #expect(pipedSorted.status == 0 && pipedSorted.output.contains(reference.output[counts]), "\(pipedSorted.output)")
        let expected = try String(contentsOfFile: path("ref.jsonl"), encoding: .utf8)
        #expect(!expected.isEmpty)
        for name in ["auto.jsonl", "linked-out.jsonl", "sorted.jsonl", "piped-sorted.jsonl", "catted.jsonl"] {
            #expect(try String(contentsOfFile: path(name), encoding: .utf8) == expected, "\(name) differs from the time-ordered file's output")
        }
    }

    @Test("a site file with an error stops replay with the field path, before reading any input")
    func badSiteFile() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("replay-cli-bad")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = dir.appendingPathComponent("site.yaml").path
        try "site: x\ngateways:\n  - { id: g1, position: [0, 0] }\nregions:\n  - { id: r1, gateways: [g9], radius_m: 2 }\n"
            .write(toFile: site, atomically: true, encoding: .utf8)
        let run = try AggregatorProcesses.run([waymark, "replay", "--site", site, "--input", "/nonexistent"])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("g9"), "the error does not name the unknown gateway: \(run.output)")
    }
}
