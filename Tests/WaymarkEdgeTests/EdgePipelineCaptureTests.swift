import Foundation
import Testing
import WaymarkCore
@testable import WaymarkEdge

/// The pure pipeline over the real HCI capture, checked against the independent decoding in
/// hcidump-2.x.decoded.jsonl (Google Bumble).
@Suite struct EdgePipelineCaptureTests {
    func events() throws -> [[UInt8]] {
        var parser = ReplayParser()
        var out: [[UInt8]] = []
        let text = try String(contentsOfFile: EdgeTestData.capture2x, encoding: .utf8)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            for item in parser.feed(line) { if case .hciEvent(let b, _, _) = item { out.append(b) } }
        }
        for item in parser.finish() { if case .hciEvent(let b, _, _) = item { out.append(b) } }
        return out
    }

    @Test("the hcidump parser yields exactly the capture's 511 events, byte for byte")
    func parserMatchesReference() throws {
        let parsed = try events()
        let reference = try String(contentsOfFile: EdgeTestData.decoded2x, encoding: .utf8).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return Hex.decode(object["hex"] as! String)!
        }
        #expect(parsed.count == 511)
        #expect(parsed == reference)
    }

    @Test("tracked devices: counts and RSSI statistics equal the reference; untracked never appear")
    func batchesMatchCapture() throws {
        var pipeline = EdgePipeline(gateway: "gw1", boot: "b", window: 3600, rules: try EdgeTestData.site().tracking)
        var batches: [SightingBatch] = []
        for (i, event) in try events().enumerated() {
            if let b = pipeline.ingest(event: event, time: 36_000 + Double(i) * 0.01) { batches.append(b) }
        }
        if let b = pipeline.flush() { batches.append(b) }
        #expect(batches.count == 1)
        let batch = try #require(batches.first)

        let reports = try EdgeTestData.decodedReports()
        let tracked = Set(EdgeTestData.trackedMACs)
        #expect(Set(batch.sightings.map(\.device)) == Set(tracked.map(EdgeTestData.mac)))
        for address in tracked {
            let mine = reports.filter { $0.address == address }
            let entry = try #require(batch.sightings.first { $0.device == EdgeTestData.mac(address) })
            #expect(entry.count == mine.count, "count of \(address)")
            #expect(entry.rssiMax == Double(mine.map(\.rssi).max()!))
            #expect(abs(entry.rssiMean - Double(mine.map(\.rssi).reduce(0, +)) / Double(mine.count)) < 1e-9)
            #expect(entry.rssiLast == Double(mine.last!.rssi))
            #expect(entry.first == 36_000 + Double(mine.first!.index) * 0.01)
            #expect(abs(entry.last - (36_000 + Double(mine.last!.index) * 0.01)) < 1e-9)
        }
        let c = pipeline.counters
        #expect(c.hciEvents == 511 && c.adverts == reports.count && c.decoded == reports.count)
        #expect(c.tracked == reports.filter { tracked.contains($0.address) }.count)
        #expect(c.tracked + c.filteredTotal == reports.count)
        #expect(c.malformedEventTotal == 0)
        // Random private addresses are dropped as such, not as "untracked".
        let randomPrivate = reports.filter { $0.addressType == 1 && !(Int($0.address.prefix(2), radix: 16)! >> 6 == 3) }.count
        #expect(c.filtered[.randomAddress] == randomPrivate)
    }

    @Test("pseudonymous mode: untracked devices appear only as anon: ids; listed ones keep their mac: id")
    func pseudonymous() throws {
        var pipeline = EdgePipeline(gateway: "gw1", boot: "b", window: 3600, rules: try EdgeTestData.site(pseudonymous: true).tracking)
        for (i, event) in try events().enumerated() { _ = pipeline.ingest(event: event, time: 36_000 + Double(i) * 0.01) }
        let flushed = pipeline.flush()
        let batch = try #require(flushed)
        let reports = try EdgeTestData.decodedReports()
        #expect(batch.sightings.count == Set(reports.map(\.address)).count)
        #expect(batch.sightings.filter { $0.device.kind == .mac }.count == 3)
        #expect(batch.sightings.filter { $0.device.kind == .anon }.count == Set(reports.map(\.address)).count - 3)
        #expect(batch.sightings.map(\.count).reduce(0, +) == reports.count)
        // No untracked address leaks in any form.
        let json = String(decoding: try JSONEncoder().encode(batch), as: UTF8.self).lowercased()
        for r in reports where !EdgeTestData.trackedMACs.contains(r.address) {
            #expect(!json.contains(r.address.lowercased().replacingOccurrences(of: ":", with: "-")))
        }
    }

    @Test("malformed HCI events are counted by cause and skipped; the rest still count")
    func malformedEvents() throws {
        var pipeline = EdgePipeline(gateway: "gw1", boot: "b", window: 3600, rules: try EdgeTestData.site().tracking)
        let good = try events()
        var truncated = good[3]
        truncated.removeLast(5)
        var badCount = good[3]
        badCount[4] = 2   // two reports declared, one present
        let inputs: [[UInt8]] = [good[3], truncated, [], [0x04, 0x0E, 0x01, 0x00], badCount, good[3]]
        for (i, e) in inputs.enumerated() { _ = pipeline.ingest(event: e, time: 36_000 + Double(i)) }
        let c = pipeline.counters
        #expect(c.hciEvents == 6)
        #expect(c.malformedEventTotal == 4)
        #expect(c.malformedEvents["parameter-length-mismatch"] == 1)
        #expect(c.malformedEvents["empty-event"] == 1)
        #expect(c.malformedEvents["not-le-meta-event"] == 1)
        #expect(c.decoded == 2)
    }
}
