import Foundation
import Testing
import WaymarkCore
@testable import WaymarkSimulation

@Suite("Evaluator arithmetic on hand-made cases")
struct EvaluatorTests {
    // Line site: a(0) — b(1) — c(2); a and c are not adjacent.
    let a = 0, b = 1, c = 2

    func handMade() -> (TruthData, RecordedRun) {
        var truth = TruthData()
        truth.ensure(0)
        truth.visits[0] = [ScoredVisit(region: a, entered: 0, exited: 100),
                           ScoredVisit(region: b, entered: 110, exited: 200),
                           ScoredVisit(region: c, entered: 210, exited: 300)]
        truth.presence[0] = [0...300]
        truth.end = 300
        var run = RecordedRun()
        run.ensure(0)
        run.locations[0] = [.init(t: 0, region: a), .init(t: 120, region: b), .init(t: 150, region: c),
                            .init(t: 160, region: b), .init(t: 215, region: c), .init(t: 330, region: nil)]
        run.visits[0] = [ScoredVisit(region: a, entered: 0, exited: 118), ScoredVisit(region: b, entered: 120, exited: 150),
                         ScoredVisit(region: c, entered: 150, exited: 160), ScoredVisit(region: b, entered: 160, exited: 212),
                         ScoredVisit(region: c, entered: 215, exited: 300)]
        return (truth, run)
    }

    @Test("every figure matches the hand computation")
    func figures() throws {
        let site = try TestSites.site(TestSites.line)
        let (truth, run) = handMade()
        let s = Evaluator(site: site).score(truth: truth, run: run)
        // Scored 280 s; wrong: 110–120 (a for b), 150–160 (c for b), 210–215 (b for c), all adjacent.
        #expect(abs(s.accuracy - 255.0 / 280) < 1e-12)
        #expect(s.accuracyWithinHop == 1)
        #expect(s.visitRecall == 1)
        #expect(s.visitPrecision == 0.8)  // c 150–160 overlaps no true visit of c
        #expect(abs(s.pathAccuracy - 0.6) < 1e-12)  // a b c vs a b c b c: distance 2 over length 5
        // Clusters: a {0–100, 0–118}; b {110–200, 120–150, 160–212}; c {210–300, 215–300}.
        #expect(s.entryLatencies == [0, 5, 10])
        #expect(s.exitLatencies == [12, 18])  // c's exit is at the end of the truth: left out
        #expect(s.exitReportLatencies.isEmpty)  // hand-made visits carry no report time
        #expect(s.entryLatencyP50 == 5)
        #expect(abs(s.entryLatencyP95! - 9.5) < 1e-9)
        #expect(s.exitLatencyP50 == 15)
        #expect(abs(s.exitLatencyP95! - 17.7) < 1e-9)
        #expect(s.flaps == 1)  // the change to c at 150, 60 s before the true visit of c
        #expect(abs(s.flapsPerDeviceHour - 12) < 1e-9)
        // At 150 the device is truly inside b: noise while it stays, not a walk past c.
        #expect(s.flapsInAnotherRegion == 1 && s.flapsBetweenRegions == 0 && s.flapsOfStationaryDevices == 0)
    }

    @Test("flaps are counted by kind: between regions, in another region, stationary")
    func flapKinds() throws {
        let site = try TestSites.site(TestSites.line)
        var (truth, run) = handMade()
        // A change to c at 105, while the device is truly between a (left at 100) and b (entered
        // at 110), 105 s before its true visit of c.
        run.locations[0].insert(.init(t: 105, region: c), at: 1)
        var s = Evaluator(site: site).score(truth: truth, run: run)
        #expect(s.flaps == 2)
        #expect(s.flapsBetweenRegions == 1 && s.flapsInAnotherRegion == 1)
        truth.stationary[0] = true
        s = Evaluator(site: site).score(truth: truth, run: run)
        #expect(s.flapsOfStationaryDevices == 2 && s.flapsBetweenRegions == 0 && s.flapsInAnotherRegion == 0)
    }

    @Test("exit reported after: all exits, and exits into no region")
    func reportedExits() throws {
        let site = try TestSites.site(TestSites.line)
        var (truth, run) = handMade()
        truth.end = 1000
        // a is left into b's visit 10 s later (within exit_delay_s 30); c is left into nothing.
        run.visits[0][0].reportedAt = 121
        run.visits[0][3].reportedAt = 216
        run.visits[0][4].reportedAt = 333
        let s = Evaluator(site: site).score(truth: truth, run: run)
        #expect(s.exitReportLatencies == [16, 21, 33])
        #expect(s.exitToNoRegionReportLatencies == [33])
    }

    @Test("a region two hops away is wrong even within one hop")
    func twoHops() throws {
        let site = try TestSites.site(TestSites.line)
        var (truth, run) = handMade()
        run.locations[0] = [.init(t: 0, region: c)]
        let s = Evaluator(site: site).score(truth: truth, run: run)
        #expect(abs(s.accuracy - 90.0 / 280) < 1e-12)
        #expect(abs(s.accuracyWithinHop - 180.0 / 280) < 1e-12)
        truth.visits[0] = []
        #expect(Evaluator(site: site).score(truth: truth, run: run).accuracy == 1)  // nothing to score
    }

    @Test("edit distance and percentiles")
    func helpers() {
        #expect(Evaluator.editDistance([1, 2, 3], [1, 3]) == 1)
        #expect(Evaluator.editDistance([], [4, 5]) == 2)
        #expect(Evaluator.editDistance([1, 2], [2, 1]) == 2)
        #expect(Evaluator.sequence([ScoredVisit(region: 1, entered: 5, exited: 6), ScoredVisit(region: 1, entered: 0, exited: 1),
                                    ScoredVisit(region: 2, entered: 7, exited: 8)]) == [1, 2])
        #expect(SystemScore.percentile([3, 1, 2].sorted(), 0.5) == 2)
        #expect(SystemScore.percentile([], 0.5) == nil)
        #expect(SystemScore.percentile([10], 0.95) == 10)
    }

    @Test("naive rule: strongest RSSI in the last 2 s, ageing out exactly")
    func naive() throws {
        let site = try TestSites.site(TestSites.line)
        var n = NaiveBaseline(site: site)
        n.add(device: 0, gateway: 0, time: 0, rssi: -60)
        n.add(device: 0, gateway: 1, time: 1, rssi: -70)
        n.add(device: 0, gateway: 1, time: 1.5, rssi: -50)
        n.add(device: 0, gateway: 0, time: 2.5, rssi: -80)
        let run = n.finish()
        #expect(run.locations[0] == [.init(t: 0, region: a), .init(t: 1.5, region: b), .init(t: 3.5, region: a),
                                     .init(t: 4.5, region: nil)])
        #expect(run.visits[0] == [ScoredVisit(region: a, entered: 0, exited: 1.5, reportedAt: 1.5),
                                  ScoredVisit(region: b, entered: 1.5, exited: 3.5, reportedAt: 3.5),
                                  ScoredVisit(region: a, entered: 3.5, exited: 4.5, reportedAt: 4.5)])
    }

    @Test("reads truth, replay output and sightings files; bad lines are counted and skipped")
    func files() throws {
        let site = try TestSites.site(TestSites.line)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-eval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let dev = "mac:02-00-00-00-00-01"
        let truthPath = dir.appendingPathComponent("truth.jsonl").path
        try """
            {"type":"presence","device":"\(dev)","entered":1000.000,"exited":1100.000,"stationary":false}
            {"type":"truth","device":"\(dev)","region":"a","entered":1000.000,"exited":1040.000}
            {"type":"truth","device":"\(dev)","region":"b","entered":"1970-01-01T00:17:30Z","exited":"1970-01-01T01:18:20+01:00"}
            not json
            """.write(toFile: truthPath, atomically: true, encoding: .utf8)
        let outputPath = dir.appendingPathComponent("out.jsonl").path
        try """
            {"device":"\(dev)","region":"a","t":1001.5,"type":"location"}
            {"device":"\(dev)","regions":["a","b"],"t":1001.5,"type":"monitored"}
            {"device":"\(dev)","region":"b","t":1052,"type":"location"}
            {"device":"\(dev)","dwell_s":50.5,"entered":1001.5,"exited":1052,"inferred":false,"region":"a","t":1052,"type":"visit"}
            {"device":"\(dev)","region":null,"t":1130,"type":"location"}
            {"device":"\(dev)","region":"lobby","t":1131,"type":"location"}
            """.write(toFile: outputPath, atomically: true, encoding: .utf8)
        let sightingsPath = dir.appendingPathComponent("s.jsonl").path
        try """
            {"t":1001.000,"gateway":"gw-a","device":"\(dev)","rssi":-60,"tx":-59}
            {"t":1051.000,"gateway":"gw-b","device":"\(dev)","rssi":-61}
            {"t":1052.000,"gateway":"gw-x","device":"\(dev)","rssi":-61}
            """.write(toFile: sightingsPath, atomically: true, encoding: .utf8)

        var reader = EvaluationReader(site: site)
        let truth = try reader.readTruth(path: truthPath)
        let run = try reader.readReplayOutput(path: outputPath)
        let naive = try reader.readNaive(sightingsPath: sightingsPath)
        #expect(truth.visits[0].map(\.region) == [0, 1])
        #expect(truth.visits[0][1].entered == 1050 && truth.visits[0][1].exited == 1100, "ISO-8601 times, as stays are written by hand")
        #expect(truth.deviceHours == 100.0 / 3600)
        #expect(run.locations[0].map(\.region) == [0, 1, nil, -1])
        #expect(run.visits[0] == [ScoredVisit(region: 0, entered: 1001.5, exited: 1052, reportedAt: 1052)])
        #expect(naive.locations[0].map(\.region) == [0, nil, 1, nil])
        #expect(reader.problemCount == 2)  // "not json" and the unknown gateway
        #expect(reader.unknownRegions == ["lobby": 1])
        let s = Evaluator(site: site).score(truth: truth, run: run)
        // a: 1000–1001.5 none, then a → 38.5 of 40; b: 1050–1052 a (adjacent), then b → 48 of 50.
        #expect(abs(s.accuracy - 86.5 / 90) < 1e-9)
        #expect(abs(s.accuracyWithinHop - 88.5 / 90) < 1e-9)
    }

    @Test("the naive rule reads a sightings file joined gateway by gateway, with ISO-8601 times and status lines, as the ordered file")
    func naiveOutOfOrder() throws {
        let site = try TestSites.site(TestSites.line)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-eval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let dev = "mac:02-00-00-00-00-01"
        // gw-a louder until 1003, then gw-b: in time order, and joined gateway by gateway.
        let rssi: [String: (Int) -> Int] = ["gw-a": { $0 < 4 ? -60 : -80 }, "gw-b": { _ in -70 }]
        func line(_ g: String, _ i: Int, iso: Bool) -> String {
            let t = iso ? "\"1970-01-01T00:16:4\(i)Z\"" : "\(1000 + i)"
            return #"{"t":\#(t),"gateway":"\#(g)","device":"\#(dev)","rssi":\#(rssi[g]!(i))}"#
        }
        let ordered = (0..<8).flatMap { i in ["gw-a", "gw-b"].map { line($0, i, iso: false) } }
        let joined = ["gw-a", "gw-b"].flatMap { g in (0..<8).map { line(g, $0, iso: true) } }
            + [#"{"t":1003,"gateway":"gw-b","status":"offline"}"#]
        func naive(_ lines: [String]) throws -> (RecordedRun, Int) {
            let path = dir.appendingPathComponent("\(UUID().uuidString).jsonl").path
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            var reader = EvaluationReader(site: site)
            return (try reader.readNaive(sightingsPath: path), reader.problemCount)
        }
        let (expected, problems) = try naive(ordered)
        #expect(problems == 0)
        #expect(expected.locations[0].map(\.region) == [0, 1, nil])
        #expect(expected.locations[0].map(\.t) == [1000, 1005, 1009])  // gw-a's -60 of 1003 holds the 2-s window to 1005
        let (fromJoined, joinedProblems) = try naive(joined)
        #expect(joinedProblems == 0, "ISO-8601 times and a status line are not problems")
        #expect(fromJoined.locations == expected.locations && fromJoined.visits == expected.visits)
    }

    @Test("live latency: time from a recorded change to the first live report of its region, 0 when already shown")
    func liveLatency() throws {
        let site = try TestSites.site(TestSites.line)
        let recorded = [LocationChange(t: 10, region: a), LocationChange(t: 20, region: b),
                        LocationChange(t: 30, region: nil), LocationChange(t: 40, region: c)]
        // a shown 1 s after its change; b shown before its change was dated (latency 0); c 2.5 s late.
        let live = [LocationChange(t: 11, region: a), LocationChange(t: 19, region: b),
                    LocationChange(t: 31, region: nil), LocationChange(t: 42.5, region: c)]
        var score = SystemScore()
        Evaluator(site: site).liveLatencies(recorded: recorded, live: live, into: &score)
        #expect(score.liveLatencies == [1, 0, 2.5])
    }

    @Test("a route without times: recorded visits in order of entry against the rooms walked through")
    func routeScore() {
        func v(_ r: Int, _ t: Double, inferred: Bool = false) -> ScoredVisit {
            ScoredVisit(region: r, entered: t, exited: t + 1, inferred: inferred)
        }
        // Exactly the route, visits out of order in the list, a repeat split in two, an inferred one.
        let exact = RouteScore(trueRoute: [a, b, c, b, a], visits: [v(b, 10), v(a, 0), v(c, 20, inferred: true), v(b, 30), v(b, 35), v(a, 40)])
        #expect(exact.trueRooms == 5 && exact.recordedRooms == 5 && exact.editDistance == 0 && exact.accuracy == 1)
        // One room missed (a c a is not a route a person walks here, but the score only counts edits).
        let missed = RouteScore(trueRoute: [a, b, c, b, a], visits: [v(a, 0), v(b, 10), v(c, 20), v(a, 40)])
        #expect(missed.editDistance == 1 && missed.recordedRooms == 4 && abs(missed.accuracy - 0.8) < 1e-12)
        // Flapping between two rooms: every extra change costs one edit, over the longer route.
        let flapping = RouteScore(trueRoute: [a, b], visits: [v(a, 0), v(b, 1), v(a, 2), v(b, 3), v(a, 4), v(b, 5)])
        #expect(flapping.editDistance == 4 && abs(flapping.accuracy - (1 - 4.0 / 6)) < 1e-12)
        // Consecutive repeats in the true route are merged too; nothing recorded scores 0.
        let none = RouteScore(trueRoute: [a, a, b], visits: [])
        #expect(none.trueRooms == 2 && none.editDistance == 2 && none.accuracy == 0)
        #expect(RouteScore(trueRoute: [], visits: []).accuracy == 1)
    }
}
