import Foundation
import Testing
import WaymarkAccuracy
import WaymarkConfig
import WaymarkCore
import WaymarkSimulation

/// The accuracy suite's short version over the real Kolakowski recordings (../shared/data, or
/// $WAYMARK_KOLAKOWSKI) and short simulated runs, replayed by the built `waymark` executable.
/// Asserts that every row is produced with figures in range, not how good they are.
@Suite("Accuracy suite", .serialized)
struct AccuracySuiteTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static var kolakowski: String {
        ProcessInfo.processInfo.environment["WAYMARK_KOLAKOWSKI"]
            ?? URL(fileURLWithPath: repository + "/../shared/data/kolakowski-ble-rss-fingerprints-calib2021").standardized.path
    }

    static func workDirectory(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-\(name)-\(UUID().uuidString)").path
        return dir
    }

    @Test("the short suite produces every row with sane figures, scored with default fusion parameters")
    func shortSuite() throws {
        let work = Self.workDirectory("accuracy")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let suite = AccuracySuite(
            options: .init(repository: Self.repository, work: work, kolakowski: Self.kolakowski, short: true),
            replay: try ReplayRunner.locate(repository: Self.repository))
        let rows = try suite.run()
        let expected = [("kolakowski test-robot", "real"), ("kolakowski calibration", "real"), ("kolakowski together", "real"),
                        ("kolakowski test-robot, open plan", "real"), ("kolakowski calibration, open plan", "real")]
            + AccuracySuite.venues.flatMap { v in (RadioProfile.allCases.map(\.rawValue) + ["sparse"]).map { (v.name, $0) } }
        #expect(rows.map(\.data) == expected.map(\.0))
        #expect(rows.map(\.radio) == expected.map(\.1))
        for row in rows {
            #expect(row.devices >= 1 && row.deviceHours > 0 && row.trueVisits > 0, "\(row.data) \(row.radio)")
            for (system, s) in [("waymark", row.waymark), ("naive", row.naive)] {
                let label = "\(row.data) \(row.radio) \(system)"
                #expect(s.scoredSeconds > 0, "\(label): nothing scored")
                #expect(s.accuracy > 0 && s.accuracy <= 1, "\(label): exact \(s.accuracy)")
                #expect(s.accuracyWithinHop >= s.accuracy && s.accuracyWithinHop <= 1, "\(label)")
                #expect((0...1).contains(s.visitPrecision) && (0...1).contains(s.visitRecall), "\(label)")
                #expect(s.recordedVisits > 0, "\(label): no visits recorded")
                #expect(s.flapsPerDeviceHour >= 0 && s.flapsPerDeviceHour.isFinite, "\(label)")
                #expect(s.entryLatencyP50 != nil, "\(label): no entry latency")
            }
        }
        // The sites the suite replays carry no fusion section: the engine's defaults.
        for name in ["kolakowski-flat", "museum", "open-hall"] {
            let site = try SiteLoader.load(path: "\(work)/\(name).geometry.yaml").site
            #expect(site.fusion == FusionParameters(), "\(name)")
        }
        let plan = try SiteLoader.load(path: "\(work)/kolakowski-open-plan.yaml").site
        #expect(plan.fusion == FusionParameters())
        // One region per anchor, anchored by it alone, in one room; every cell reachable.
        #expect(plan.regions.map(\.gateways) == plan.gateways.map { [$0.id] }, "\(plan.regions)")
        #expect(Set(plan.regions.map(\.room)).count == 1)
        #expect(plan.edges.count >= plan.regions.count - 1)
        let json = try JSONSerialization.jsonObject(with: Data(AccuracySuite.json(rows).utf8)) as? [[String: Any]]
        #expect(json?.count == rows.count)
        #expect((json?.first?["waymark"] as? [String: Any])?["exact"] is Double)
        let table = AccuracySuite.table(rows)
        #expect(table.split(separator: "\n").filter { $0.hasPrefix("| ") }.count == rows.count + 1)

        // The walking person: scored by route only; the route is what convert.py derived from the
        // reference trajectory (out and back through adjacent rooms, starting in the bedroom).
        let routes = try suite.runRoutes()
        #expect(routes.map(\.data) == ["kolakowski test-walk"])
        let walk = try KolakowskiWalk(directory: work + "/kolakowski", dataset: Self.kolakowski, repository: Self.repository)
        let flat = try SiteLoader.load(path: "\(work)/kolakowski-flat.geometry.yaml").site
        #expect(walk.route.count == 1 + 8 * walk.laps && walk.route.first == "bedroom" && walk.route.last == "bedroom")
        for (x, y) in zip(walk.route, walk.route.dropFirst()) {
            let (i, j) = (flat.regionIndex(x), flat.regionIndex(y))
            #expect(i != nil && j != nil && flat.graph.areAdjacent(i!, j!), "\(x) → \(y) is not a move between adjacent rooms")
        }
        for r in routes {
            #expect(r.readings > 1000 && r.durationS > 200, "\(r.data)")
            for (system, s) in [("waymark", r.waymark), ("naive", r.naive)] {
                #expect(s.trueRooms == walk.route.count, "\(r.data) \(system)")
                #expect(s.recordedRooms > 0 && (0...1).contains(s.accuracy), "\(r.data) \(system): \(s)")
            }
        }
        #expect(AccuracySuite.routeTable(routes).split(separator: "\n").filter { $0.hasPrefix("| ") }.count == routes.count + 1)
        let both = try JSONSerialization.jsonObject(with: Data(AccuracySuite.json(rows, routes: routes).utf8)) as? [String: Any]
        #expect((both?["rows"] as? [Any])?.count == rows.count && (both?["routes"] as? [Any])?.count == routes.count)
    }

    @Test("the recordings as tags at once: every reading once, under its tag, moved with its truth to the staggered start")
    func together() throws {
        let work = Self.workDirectory("together")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let recordings = try AccuracySuite.recordings.map {
            try KolakowskiRecording(name: $0, directory: work + "/kolakowski", dataset: Self.kolakowski, repository: Self.repository)
        }
        let together = try KolakowskiTogether(recordings: recordings, directory: work + "/kolakowski",
                                              truthPath: work + "/together.visits.jsonl", staggerS: 5)
        // The robot run is one tag (its pauses are short), the calibration run four.
        #expect(together.devices.count == 5 && Set(together.devices).count == 5)
        struct Line: Decodable { var t: Double; var device: String; var gateway: String; var rssi: Double }
        struct Truth: Decodable { var type: String; var device: String; var entered: Double; var exited: Double; var region: String? }
        func read<T: Decodable>(_ path: String, as: T.Type) throws -> [T] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try JSONDecoder().decode(T.self, from: Data($0.utf8)) }
        }
        let lines = try read(together.sightingsPath, as: Line.self)
        let originals = try recordings.flatMap { try read($0.sightingsPath, as: Line.self) }
        #expect(lines.count == originals.count)
        #expect(zip(lines, lines.dropFirst()).allSatisfy { $0.t <= $1.t }, "not in time order")
        // The same readings: every tag's (gateway, RSSI) multiset is one of the originals'.
        #expect(lines.map { "\($0.gateway) \($0.rssi)" }.sorted() == originals.map { "\($0.gateway) \($0.rssi)" }.sorted())
        let truth = try read(together.truthPath, as: Truth.self)
        let first = Dictionary(grouping: truth.filter { $0.type == "presence" }, by: \.device).mapValues { $0.map(\.entered).min()! }
        let origin = first.values.min()!
        for (i, device) in together.devices.enumerated() {
            // Each tag's truth starts at its staggered start, and its readings lie within its presence.
            #expect(abs(first[device]! - (origin + 5 * Double(i))) < 1e-6, "\(device)")
            let presence = truth.filter { $0.device == device && $0.type == "presence" }
            let readings = lines.filter { $0.device == device }
            #expect(readings.count > 500, "\(device)")
            let within = readings.filter { r in presence.contains { r.t >= $0.entered - 1 && r.t <= $0.exited + 1 } }.count
            #expect(Double(within) >= 0.99 * Double(readings.count), "\(device): \(readings.count - within) readings outside its presence")
            #expect(truth.contains { $0.device == device && $0.type == "truth" && $0.region != nil })
        }
    }

    @Test("the real runs cut into the edge's 1-s batches score as their single readings: the suite measures the aggregator's path")
    func edgeWindows() throws {
        let work = Self.workDirectory("edge-windows")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let runner = try ReplayRunner.locate(repository: Self.repository), waymark = runner.executable
        let site = work + "/flat.yaml"
        _ = try GeometrySite.write(from: Self.repository + "/deploy/examples/kolakowski-flat.yaml", to: site)
        for name in AccuracySuite.recordings {
            let recording = try KolakowskiRecording(name: name, directory: work + "/kolakowski", dataset: Self.kolakowski,
                                                    repository: Self.repository)
            let truth = "\(work)/\(name).visits.jsonl", batches = "\(work)/\(name).batches.jsonl"
            try recording.writeVisitTruth(to: truth)
            let windows = try EdgeWindows.write(sightings: recording.sightingsPath, to: batches)
            #expect(windows > 6 * 300, "\(name): \(windows) batches")
            try ReplayRunner.run(waymark, ["replay", "--site", site, "--input", recording.sightingsPath, "--output", "\(work)/\(name).readings.jsonl"],
                                 log: "\(work)/\(name).readings.log")
            try ReplayRunner.run(waymark, ["replay", "--batches", "--site", site, "--input", batches, "--output", "\(work)/\(name).batches.out.jsonl"],
                                 log: "\(work)/\(name).batches.log")
            let readings = try runner.evaluate(site: site, truth: truth, output: "\(work)/\(name).readings.jsonl")
            let windowed = try runner.evaluate(site: site, truth: truth, output: "\(work)/\(name).batches.out.jsonl")
            for key in ["current_region_accuracy", "visit_precision", "visit_recall"] {
                let (a, b) = (readings[key] ?? -1, windowed[key] ?? -2)
                #expect(a > 0.5 && abs(a - b) <= (key == "current_region_accuracy" ? 0.01 : 0.05),
                        "\(name) \(key): single readings \(a), edge batches \(b)")
            }
        }
    }

    @Test("replay output does not depend on the process's hash seed")
    func replayIsDeterministicAcrossProcesses() throws {
        // Swift seeds Dictionary and Set order per process; SWIFT_DETERMINISTIC_HASHING=1 fixes the
        // seed. A result that depends on that order (as the movement model's tie-breaking did until
        // 2026-11-26: 2 of 6 runs differed on this input) shows up as a difference between the
        // fixed-seed run and some of the random-seed runs.
        let work = Self.workDirectory("determinism")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let waymark = try ReplayRunner.locate(repository: Self.repository).executable
        let site = try GeometrySite.write(from: Self.repository + "/deploy/examples/museum.yaml", to: work + "/museum.yaml")
        #expect(site.regions.count > 20)
        try ReplayRunner.run(waymark, ["simulate", "--site", work + "/museum.yaml", "--devices", "8", "--duration", "10m", "--seed", "1",
                                       "--radio", "indoor", "--packet-loss", "0.6", "--advertising-interval", "1-3",
                                       "--sightings", work + "/s.jsonl", "--truth", work + "/t.jsonl"], log: work + "/simulate.log")
        func replay(_ name: String, _ environment: [String: String]) throws -> Data {
            try ReplayRunner.run(waymark, ["replay", "--site", work + "/museum.yaml", "--input", work + "/s.jsonl", "--transitions",
                                           "--output", work + "/\(name).jsonl"], log: work + "/\(name).log", environment: environment)
            return try Data(contentsOf: URL(fileURLWithPath: work + "/\(name).jsonl"))
        }
        let fixed = try replay("fixed", ["SWIFT_DETERMINISTIC_HASHING": "1"])
        #expect(fixed.count > 10_000)
        for i in 1...4 {
            let random = try replay("random-\(i)", ["SWIFT_DETERMINISTIC_HASHING": "0"])
            #expect(random == fixed, "run \(i) with a random hash seed differs from the fixed-seed run (diff \(work)/fixed.jsonl \(work)/random-\(i).jsonl)")
        }
    }

    @Test("the same-geometry validation prints both runs; residual quantiles of the indoor radio within 2 dB")
    func validation() throws {
        let work = Self.workDirectory("radio-validate")
        defer { try? FileManager.default.removeItem(atPath: work) }
        var validation = try RadioValidation(repository: Self.repository, work: work, kolakowski: Self.kolakowski)
        validation.seeds = [1, 2, 3]
        var results: [RadioValidation.Result] = []
        for name in AccuracySuite.recordings {
            let recording = try KolakowskiRecording(name: name, directory: work + "/kolakowski", dataset: Self.kolakowski,
                                                    repository: Self.repository)
            results.append(try validation.validate(recording, work: work))
        }
        #expect(results.map(\.run) == AccuracySuite.recordings)
        for r in results {
            #expect(r.realReadings > 1000 && r.simulatedReadings > 1000, "\(r.run)")
            #expect(r.realNaive > 0.5 && r.realNaive < 1, "\(r.run)")
            #expect(r.simulatedNaive.count == 3 && r.simulatedNaive.allSatisfy { $0 > 0.3 && $0 < 1 }, "\(r.run)")
            #expect(r.worstQuantileGapDB <= RadioValidation.quantileToleranceDB, "\(r.run): \(r.realQuantiles) vs \(r.simulatedQuantiles)")
        }
        #expect(RadioValidation.report(results, profile: .indoor, seeds: 3).contains("| test-robot |"))
    }
}
