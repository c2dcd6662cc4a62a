import Foundation
import Testing
import WaymarkCore
import WaymarkFusion
@testable import WaymarkAggregator

/// A live gateway status is applied at the time of the newest evidence, not at the receive clock:
/// when batches carry older times (a spool backlog, a replayed venue), a heartbeat at the receive
/// time would lie in the future of the evidence and hold the gateway's exits back until then.
@Suite("Gateway status in evidence time")
struct StatusEvidenceTimeTests {
    let topics = Topics(site: "line")

    @Test("a heartbeat received an hour ahead of the evidence does not postpone an exit")
    func heartbeatAheadOfTheEvidence() throws {
        let settings = AggregatorCore.Settings(clock: .recorded)
        var core = AggregatorCore(site: try LineVenue.site(count: 2), topics: topics, settings: settings)
        let t0 = 1_700_000_000.0
        let device = LineVenue.device(0)
        func send(_ b: SightingBatch, at received: Double) throws {
            let outcome = core.handle(topic: topics.sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: received)
            #expect(outcome == .accepted(sightings: b.sightings.count))
        }
        // Ten seconds of the device next to gw-0 (region r0).
        for i in 0..<10 {
            let t = t0 + Double(i)
            try send(SightingBatch(gateway: "gw-0", boot: "b", seq: UInt64(i + 1), start: t, end: t + 1, sightings: [
                .init(device: device, count: 1, rssiMax: -50, rssiMean: -50, rssiLast: -50, tx: -59, first: t + 0.5, last: t + 0.5),
            ]), at: t + 1)
        }
        // gw-0's heartbeat arrives by a receive clock an hour ahead of its batches.
        let status = GatewayStatus(state: .online, gateway: "gw-0", version: "test", boot: "b", t: t0 + 3600)
        _ = core.handle(topic: topics.status("gw-0"), payload: Array(try JSONEncoder().encode(status)), receivedAt: t0 + 3600)
        // A minute of empty batches from both gateways: the device is gone.
        for i in 10..<70 {
            let t = t0 + Double(i)
            for g in 0..<2 {
                let seq = UInt64(g == 0 ? i + 1 : i - 9)
                try send(SightingBatch(gateway: "gw-\(g)", boot: "b", seq: seq, start: t, end: t + 1, sightings: []), at: t + 1)
            }
        }
        let sealed = core.sealWrite()
        let write = try #require(sealed)
        let exits = write.events.filter { $0.device == device && $0.kind == "exit" && $0.region == "r0" }
        // Last heard at t0 + 9.5: the exit is exit_delay_s (30 s) after that, within the minute.
        #expect(exits.count == 1, "\(write.events.map { "\($0.kind) \($0.region ?? "-") \($0.t - t0)" })")
        if let exit = exits.first { #expect(abs(exit.t - (t0 + 39.5)) < 1.5, "exit at t0 + \(exit.t - t0)") }
    }
}
