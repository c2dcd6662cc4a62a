import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkFusion
@testable import WaymarkAggregator

/// The aggregator's side of `forget_after_s`: the write deletes the forgotten device's checkpoint
/// and the publications clear its retained state and monitored set.
@Suite struct ForgetDeviceTests {
    let topics = Topics(site: "line")

    func core() throws -> AggregatorCore {
        let settings = AggregatorCore.Settings(clock: .recorded)
        let yaml = LineVenue.yaml(count: 3) + "  forget_after_s: 60\n  journey_timeout_s: 60\n"
        return AggregatorCore(site: try SiteLoader.parse(yaml: yaml).site, topics: topics, settings: settings)
    }

    /// Device 0 walks r0 → r1 for 40 s; then the gateways only send empty batches (heartbeats).
    func traffic(quietFor quiet: Int) -> [SightingBatch] {
        let start = 1_700_000_000.0
        var batches = LineWalk.batches(LineWalk.records(devices: 1, path: [0, 1], dwell: 20, start: start, regions: 3))
        var seq = [UInt64](repeating: 0, count: 3)
        for b in batches { seq[Int(b.gateway.dropFirst(3))!] = max(seq[Int(b.gateway.dropFirst(3))!], b.seq) }
        for s in 0..<quiet {
            let t = start + 41 + Double(s)
            for g in 0..<3 {
                seq[g] += 1
                batches.append(SightingBatch(gateway: "gw-\(g)", boot: "boot-1", seq: seq[g], start: t, end: t + 1, sightings: []))
            }
        }
        return batches
    }

    @Test func forgottenDeviceLosesItsCheckpointAndItsRetainedState() throws {
        var c = try core()
        let device = LineVenue.device(0)
        var writes: [WriteBatch] = []
        var publications: [Publication] = []
        for (i, b) in traffic(quietFor: 300).enumerated() {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
            if i % 20 == 19 {
                if let w = c.sealWrite() { writes.append(w) }
                publications += c.takePublications()
            }
        }
        if let w = c.sealWrite() { writes.append(w) }
        publications += c.takePublications()
        let forgetting = try #require(writes.firstIndex { !$0.forgottenDevices.isEmpty })
        #expect(writes[forgetting].forgottenDevices == [device])
        #expect(writes.flatMap(\.forgottenDevices).count == 1)
        #expect(writes[..<forgetting].contains { w in w.checkpoints.contains { $0.device == device } })
        #expect(!writes[forgetting...].contains { w in w.checkpoints.contains { $0.device == device } },
                "no checkpoint of the device is written once it is forgotten")
        #expect(writes[...forgetting].contains { w in w.journeys.contains { $0.device == device } },
                "its journey is stored (the write that forgets it at the latest)")
        #expect(c.fusion.deviceCount == 0)
        // Its retained state and monitored set are cleared, after the last state published.
        let state = topics.deviceState(device), monitored = topics.deviceMonitored(device)
        let lastState = try #require(publications.lastIndex { $0.topic == state })
        #expect(publications[lastState].payload.isEmpty && publications[lastState].retain)
        let lastMonitored = try #require(publications.lastIndex { $0.topic == monitored })
        #expect(publications[lastMonitored].payload.isEmpty && publications[lastMonitored].retain)
        #expect(publications.contains { $0.topic == state && !$0.payload.isEmpty }, "it had a state before")
    }

    @Test func mergedWritesDeleteAForgottenDeviceInsteadOfStoringItsOlderCheckpoint() throws {
        var c = try core()
        var writes: [WriteBatch] = []
        for (i, b) in traffic(quietFor: 300).enumerated() {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
            if i % 20 == 19, let w = c.sealWrite() { writes.append(w) }
        }
        if let w = c.sealWrite() { writes.append(w) }
        var merged = writes[0]
        for w in writes.dropFirst() { merged.absorb(w) }
        #expect(merged.forgottenDevices == [LineVenue.device(0)])
        #expect(merged.checkpoints.isEmpty)
    }

    @Test func deviceHeardAgainAfterBeingForgottenIsCheckpointedAfresh() throws {
        var c = try core()
        let device = LineVenue.device(0)
        var batches = traffic(quietFor: 200)
        // It comes back at r2, in the same write as … nothing else: one more batch of its sightings.
        let t = batches.last!.end + 1
        let seq = batches.filter { $0.gateway == "gw-2" }.map(\.seq).max()! + 1
        batches.append(SightingBatch(gateway: "gw-2", boot: "boot-1", seq: seq, start: t, end: t + 1,
                                     sightings: [.init(device: device, count: 3, rssiMax: -50, rssiMean: -52, rssiLast: -52, tx: -59,
                                                       first: t, last: t + 1)]))
        for b in batches {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
        }
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        // Forgotten, then new: the store deletes the old checkpoint first, then stores the new one.
        #expect(write.forgottenDevices == [device])
        #expect(write.checkpoints.map(\.device) == [device])
        #expect(c.fusion.deviceCount == 1)
        let publications = c.takePublications()
        let state = topics.deviceState(device)
        let clear = try #require(publications.firstIndex { $0.topic == state && $0.payload.isEmpty })
        let fresh = try #require(publications.lastIndex { $0.topic == state })
        #expect(clear < fresh && !publications[fresh].payload.isEmpty, "the new state follows the clearing")
    }
}
