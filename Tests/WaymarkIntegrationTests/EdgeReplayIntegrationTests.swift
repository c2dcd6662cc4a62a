import Foundation
import Testing
import WaymarkCore
import WaymarkEdge

/// The edge agent end to end against the real Mosquitto: replay → batches → broker → acks.
@Suite("Edge: agent replay against Mosquitto", .enabled(if: EdgeTestEnvironment.hasBroker), .serialized)
struct EdgeReplayIntegrationTests {
    struct Key: Hashable { var window: Double; var device: DeviceID }
    struct Stats { var count = 0; var sum = 0.0; var max = -1000.0; var last = 0.0 }

    /// Per (window, device) statistics straight from the reference decoding of the capture,
    /// with the replay's timing (event i at 36 000 + i × 10 ms).
    func expected() throws -> [Key: Stats] {
        let tracked = Set(EdgeHarness.trackedMACs)
        var out: [Key: Stats] = [:]
        let text = try String(contentsOfFile: EdgeHarness.decoded2x, encoding: .utf8)
        for line in text.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let t = 36_000 + Double(object["index"] as! Int) * 0.01
            for r in object["reports"] as! [[String: Any]] where tracked.contains(r["address"] as! String) {
                let key = Key(window: (t).rounded(.down), device: DeviceID.mac(DeviceID.parseMAC(r["address"] as! String)!))
                let rssi = Double(r["rssi"] as! Int)
                out[key, default: Stats()].count += 1
                out[key]!.sum += rssi
                out[key]!.max = Swift.max(out[key]!.max, rssi)
                out[key]!.last = rssi
            }
        }
        return out
    }

    @Test("a replay of the HCI capture yields batches matching it for tracked devices, nothing for others; acks empty the spool")
    func replayMatchesCapture() async throws {
        let url = try #require(EdgeTestEnvironment.brokerURL)
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-replay")
        let spool = EdgeHarness.temporaryDirectory("edge-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let collector = try BatchCollector(broker: url, prefix: prefix, acking: true)
        defer { collector.close() }
        try collector.client.waitUntilConnected(timeout: 20)
        try await Task.sleep(for: .milliseconds(200))

        let source = ReplaySource(path: EdgeHarness.capture2x, rate: 0, eventInterval: 0.01, startTime: 36_000)
        let run = try RunningAgent(EdgeHarness.config(broker: url, prefix: prefix, spool: spool), source: source)
        let done = await eventually(timeout: 60) {
            let s = run.agent.snapshot()
            return s.sourceFinished && s.spoolDepth == 0 && collector.keys.count == Int(s.nextSeq - 1)
        }
        try await run.stop()
        #expect(done)

        let expected = try expected()
        // A batch whose ack is slower than spool.resend_after_s (1 s here) is sent again: the
        // collector may hold it twice, and both copies must be the same batch.
        let copies = Dictionary(grouping: collector.batches, by: \.seq)
        #expect(copies.values.allSatisfy { Set($0).count == 1 }, "a re-sent batch differs from its first copy")
        let batches = copies.keys.sorted().map { copies[$0]![0] }
        #expect(Set(batches.map(\.boot)) == [run.agent.boot])
        #expect(batches.map(\.seq).sorted() == Array(1...UInt64(batches.count)))
        #expect(batches.count == Set(expected.keys.map(\.window)).count)
        var seen: Set<Key> = []
        for batch in batches {
            #expect(batch.v == 1 && batch.gateway == "gw1" && batch.end - batch.start == 1)
            for e in batch.sightings {
                let key = Key(window: batch.start, device: e.device)
                seen.insert(key)
                guard let want = expected[key] else {
                    Issue.record("unexpected device \(e.device) in window \(batch.start)")
                    continue
                }
                #expect(e.count == want.count)
                #expect(e.rssiMax == want.max)
                #expect(abs(e.rssiMean - want.sum / Double(want.count)) < 1e-9)
                #expect(e.rssiLast == want.last)
            }
        }
        #expect(seen == Set(expected.keys))
        let s = run.agent.snapshot()
        #expect(s.pipeline.hciEvents == 511 && s.pipeline.malformedEventTotal == 0)
        #expect(s.runtime.acked == batches.count && s.spoolDepth == 0)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? []).filter { $0.hasSuffix(".wms") }.isEmpty)
        // The retained status went online and, at shutdown, offline.
        #expect(await eventually(timeout: 60) { collector.statuses.last?.state == .offline })
        #expect(collector.statuses.contains { $0.state == .online && $0.boot == run.agent.boot && $0.version == EdgeAgent.version })
    }

    @Test("without acks batches stay spooled and are re-sent; an ack deletes them")
    func resendUntilAck() async throws {
        let url = try #require(EdgeTestEnvironment.brokerURL)
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-resend")
        let spool = EdgeHarness.temporaryDirectory("edge-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let collector = try BatchCollector(broker: url, prefix: prefix, acking: false)
        defer { collector.close() }
        try collector.client.waitUntilConnected(timeout: 20)
        try await Task.sleep(for: .milliseconds(200))

        var config = EdgeHarness.config(broker: url, prefix: prefix, spool: spool)
        config.spoolSegmentBatches = 2
        let run = try RunningAgent(config, source: ReplaySource(path: EdgeHarness.capture2x, rate: 0, startTime: 36_000))
        #expect(await eventually(timeout: 60) { run.agent.snapshot().sourceFinished })
        let produced = Int(run.agent.snapshot().nextSeq - 1)
        // One batch per 1 s window with a tracked device (the capture spans 5.1 s).
        #expect(produced == Set(try expected().keys.map(\.window)).count)
        // Every batch arrives at least twice (first send + resend after 1 s), all stay spooled.
        #expect(await eventually(timeout: 60) {
            let counts = Dictionary(grouping: collector.batches, by: \.seq).mapValues(\.count)
            return counts.count == produced && counts.values.allSatisfy { $0 >= 2 }
        })
        #expect(run.agent.snapshot().spoolDepth == produced)
        #expect(run.agent.snapshot().runtime.resent >= produced)
        let files = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".wms") }
        #expect(files.count == (produced + 1) / 2)

        // The aggregator commits the first four: they go, the rest stay.
        try collector.ack(boot: run.agent.boot, seq: 4)
        #expect(await eventually(timeout: 60) { run.agent.snapshot().spoolDepth == produced - 4 })
        try collector.ack(boot: run.agent.boot, seq: UInt64(produced))
        #expect(await eventually(timeout: 60) { run.agent.snapshot().spoolDepth == 0 })
        try await run.stop()
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".wms") }.isEmpty)
    }

    @Test("malformed replay lines and malformed HCI events are counted and skipped, never fatal")
    func malformedInput() async throws {
        let url = try #require(EdgeTestEnvironment.brokerURL)
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-malformed")
        let spool = EdgeHarness.temporaryDirectory("edge-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let capture = try String(contentsOfFile: EdgeHarness.capture2x, encoding: .utf8)
        var lines = capture.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Between packets: a junk line, a non-hex packet, a truncated event, an event with a wrong
        // report count; and junk at the end.
        let inserts = [
            (40, "> 04 3E 0C 02 02 03 01 01 02 03 04 05 06 00 B5"),
            (30, "> 04 3E 2B 02 01 03 01 BD 5E 9B 53 88 40 1F 1E FF 06 00 01"),
            (20, "> 04 3E XY 02"),
            (10, "this is not hcidump output"),
        ]
        let packetStarts = lines.indices.filter { lines[$0].hasPrefix(">") }
        for (packet, text) in inserts { lines.insert(text, at: packetStarts[packet]) }
        lines.append("#### trailing garbage")
        let file = spool + "-capture.txt"
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }

        var config = EdgeHarness.config(broker: url, prefix: prefix, spool: spool)
        config.replayExitWhenDone = true
        let agent = try EdgeAgent(config: config, site: try EdgeHarness.site(),
                                  source: ReplaySource(path: file, rate: 0, startTime: 36_000))
        try await agent.run()   // returns by itself once everything is delivered
        let s = agent.snapshot()
        #expect(s.pipeline.malformedLines == 3)
        #expect(s.pipeline.malformedEvents == ["parameter-length-mismatch": 1, "truncated-report": 1])
        #expect(s.pipeline.hciEvents == 511 + 2)
        #expect(s.pipeline.decoded == 511)
        // Every good report still counts: as many tracked sightings as the reference has.
        #expect(s.pipeline.tracked == (try expected().values.map(\.count).reduce(0, +)))
        // Every batch published; on a loaded machine one may be re-sent before its ack arrived
        // (the harness resends after 1 s), and then it is published twice.
        #expect(s.pipeline.batches >= 5)
        #expect(s.runtime.published >= s.pipeline.batches && s.runtime.published <= s.pipeline.batches + s.runtime.resent,
                "published \(s.runtime.published), batches \(s.pipeline.batches), resent \(s.runtime.resent)")
    }
}
