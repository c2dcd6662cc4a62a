import Foundation
import Testing
import WaymarkCore
import WaymarkJSON
@testable import WaymarkSimulation

@Suite("Determinism and faults")
struct DeterminismTests {
    func run(seed: UInt64, configure: (inout SimulationParameters) -> Void = { _ in }) throws -> (Scenario, [SimulatedSighting]) {
        let site = try TestSites.site(TestSites.line)
        var p = SimulationParameters()
        p.seed = seed
        p.deviceCount = 12
        p.duration = 600
        p.movement.dwellMedianS = 30
        configure(&p)
        let scenario = try Scenario(site: site, parameters: p)
        return (scenario, TestSites.allSightings(scenario))
    }

    @Test("the same seed gives identical sightings and truth; another seed does not")
    func sameSeed() throws {
        let (s1, a) = try run(seed: 42)
        let (s2, b) = try run(seed: 42)
        let (_, c) = try run(seed: 43)
        #expect(!a.isEmpty)
        #expect(a == b)
        #expect(s1.truth() == s2.truth())
        #expect(a != c)
    }

    @Test("the random generator is reproducible and its normal deviates have mean 0 and sd 1")
    func generator() {
        var r1 = SimulationRandom(seed: 7), r2 = SimulationRandom(seed: 7)
        #expect((0..<100).map { _ in r1.next() } == (0..<100).map { _ in r2.next() })
        var g = SimulationRandom(seed: 11)
        let xs = (0..<200_000).map { _ in g.gaussian() }
        let mean = xs.reduce(0, +) / Double(xs.count)
        let sd = (xs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(xs.count)).squareRoot()
        #expect(abs(mean) < 0.01)
        #expect(abs(sd - 1) < 0.01)
        #expect((0..<10_000).allSatisfy { _ in (0..<1).contains(g.uniform()) })
    }

    @Test("sightings come out sorted by time, also with a skewed gateway clock")
    func sortedWithSkew() throws {
        let (scenario, sightings) = try run(seed: 5) { $0.faults.clockSkewS = ["gw-b": -4, "gw-c": 3] }
        #expect(zip(sightings, sightings.dropFirst()).allSatisfy { $0.time <= $1.time })
        #expect(scenario.clockSkewS == [0, -4, 3])
    }

    @Test("an offline gateway hears nothing during its outage")
    func outage() throws {
        let (scenario, sightings) = try run(seed: 5) {
            $0.faults.outages = [.init(gateway: "gw-a", from: 100, to: 300)]
            $0.arrivals = .atStart
        }
        let start = scenario.parameters.start
        let a = sightings.filter { $0.gateway == 0 }
        #expect(!a.isEmpty)
        #expect(!a.contains { $0.time >= start + 100 && $0.time <= start + 300 })
        #expect(sightings.contains { $0.gateway == 1 && $0.time >= start + 100 && $0.time <= start + 300 })
    }

    @Test("batches: every sighting once without faults; duplicates and reordering when asked")
    func batches() throws {
        let (scenario, sightings) = try run(seed: 9) { $0.faults.duplicateRate = 0.2; $0.faults.reorderRate = 0.2 }
        var batcher = SightingBatcher(scenario: scenario)
        var batches = batcher.add(sightings)
        batches += batcher.finish()
        let delivered = batches.flatMap(\.sightings)
        #expect(Set(delivered) == Set(sightings))
        #expect(delivered.count > sightings.count)
        // Reordered: some gateway's sequence numbers go backwards in delivery order.
        var last: [Int: UInt64] = [:]
        var backwards = 0
        for b in batches {
            if let l = last[b.gateway], b.seq < l { backwards += 1 }
            last[b.gateway] = b.seq
        }
        #expect(backwards > 0)
        // A wire batch aggregates per device.
        let b = batches.first { $0.sightings.count > 1 }!
        let wire = b.wireBatch(scenario: scenario)
        #expect(wire.sightings.map(\.count).reduce(0, +) == b.sightings.count)
        #expect(wire.gateway == scenario.site.gateways[b.gateway].id)

        let (plain, all) = try run(seed: 9)
        var clean = SightingBatcher(scenario: plain)
        let once = (clean.add(all) + clean.finish()).flatMap(\.sightings)
        #expect(once.sorted { ($0.time, $0.gateway, $0.device) < ($1.time, $1.gateway, $1.device) } == all)
    }

    @Test("with empty windows every gateway sends every window while it is up, numbered in order; the sightings are the same")
    func emptyWindows() throws {
        let outage = 120.0...240.0
        let (scenario, sightings) = try run(seed: 9) { p in
            p.faults.emptyWindows = true
            p.faults.outages = [.init(gateway: "gw-b", from: outage.lowerBound, to: outage.upperBound)]
        }
        // Fed in chunks, as the generator does.
        var batcher = SightingBatcher(scenario: scenario)
        var batches: [SimulatedBatch] = []
        for chunk in stride(from: 0, to: sightings.count, by: 500).map({ Array(sightings[$0..<min($0 + 500, sightings.count)]) }) {
            batches += batcher.add(chunk)
        }
        batches += batcher.finish()
        #expect(Set(batches.flatMap(\.sightings)) == Set(sightings), "every sighting once")
        let start = scenario.parameters.start
        for g in scenario.site.gateways.indices {
            let mine = batches.filter { $0.gateway == g }
            // One batch per window of the period, in order; while the gateway is down none but
            // what it heard in the windows its outage cuts (a sighting just before it went down).
            let starts = mine.map { $0.start - start }
            let touchesOutage = { (w: Double) in g == 1 && (outage.contains(w) || outage.contains(w + 1)) }
            #expect(starts == starts.sorted() && Set(starts).count == starts.count, "gateway \(g): each window once, in order")
            #expect(Set(starts.filter { !touchesOutage($0) }) == Set(stride(from: 0.0, to: 600, by: 1).filter { !touchesOutage($0) }),
                    "gateway \(g): every window while up")
            #expect(mine.allSatisfy { !touchesOutage($0.start - start) || !$0.sightings.isEmpty }, "gateway \(g): no empty window while down")
            #expect(mine.contains { $0.sightings.isEmpty } && mine.contains { !$0.sightings.isEmpty })
            // Sequence numbers count up within each boot (gateway 1 restarts after its outage).
            for (_, boot) in Dictionary(grouping: mine, by: \.boot) {
                #expect(boot.map(\.seq) == Array(1...UInt64(boot.count)))
            }
        }
        #expect(Set(batches.filter { $0.gateway == 1 }.map(\.boot)).count == 2)
    }

    @Test("durations parse as on the command line")
    func durations() {
        #expect(DurationText.seconds("90s") == 90)
        #expect(DurationText.seconds("30m") == 1800)
        #expect(DurationText.seconds("2h") == 7200)
        #expect(DurationText.seconds("1h30m") == 5400)
        #expect(DurationText.seconds("45") == 45)
        #expect(DurationText.seconds("1.5h") == 5400)
        #expect(DurationText.seconds("10x") == nil)
        #expect(DurationText.seconds("h") == nil)
        #expect(DurationText.seconds("5m3") == nil)
    }
}

@Suite("Output encoding")
struct OutputEncodingTests {
    @Test("a sighting line is JSON in the replay format and reads back exactly")
    func roundTrip() throws {
        let site = try TestSites.site(TestSites.line)
        var p = SimulationParameters()
        p.deviceCount = 3
        let scenario = try Scenario(site: site, parameters: p)
        let encoder = JSONLineEncoder(scenario: scenario)
        var line: [UInt8] = []
        encoder.appendSighting(SimulatedSighting(time: 1_780_304_400.0456, device: 2, gateway: 1, rssi: -77), to: &line)
        let text = String(decoding: line, as: UTF8.self)
        #expect(text == "{\"t\":1780304400.046,\"gateway\":\"gw-b\",\"device\":\"\(scenario.devices[2].id)\",\"rssi\":-77,\"tx\":-59}\n")
        line.removeLast()
        try line.withUnsafeBufferPointer { buf in
            let s = try JSONObjectIndex(buf)
            #expect(s.number("t") == 1_780_304_400.046)
            #expect(s.number("rssi") == -77)
            #expect(s.string("gateway") == "gw-b")
        }
    }
}

@Suite("Buffered file writer")
struct BufferedFileWriterTests {
    @Test("formatted writes and appended bytes reach the file in call order across flushes")
    func order() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-writer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let w = try BufferedFileWriter(path: path, capacity: 8)
        var expected = ""
        for i in 0..<50 {
            let text = "line \(i)\n"
            if i % 3 == 0 {
                w.buffer.append(contentsOf: Array(text.utf8))
                try w.flushIfFull()
            } else {
                let bytes = Array("#\(i)\n".utf8)
                try w.write(maxBytes: bytes.count) { p in
                    for (k, b) in bytes.enumerated() { p[k] = b }
                    return bytes.count
                }
                expected += "#\(i)\n"
                continue
            }
            expected += text
        }
        try w.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == expected)
        #expect(w.bytesWritten == expected.utf8.count)
    }
}
