import Testing
import WaymarkCore
@testable import WaymarkFusion

@Suite struct RejectionTests {
    @Test func implausibleReadingsAreCountedAndIgnored() throws {
        var d = Driver(try Venue.line(2))
        #expect(d.hear("g0", rssi: 5).isEmpty)
        #expect(d.hear("g0", rssi: -200).isEmpty)
        #expect(d.hear("g0", rssi: .nan).isEmpty)
        #expect(d.hear("g0", rssi: -60, tx: -120).isEmpty)
        #expect(d.hear("g0", rssi: -60, tx: 25).isEmpty)
        #expect(d.engine.counters.implausibleRSSI == 3)
        #expect(d.engine.counters.implausibleTxPower == 2)
        #expect(d.engine.counters.accepted == 0)
        #expect(d.outputs.isEmpty)
        // A plausible advertised tx power is used for the distance.
        #expect(!d.hear("g0", rssi: -70, tx: -70).isEmpty)
        #expect(d.states("r0").first?.distanceM == 1)
    }

    @Test func singleSpikeIsRejectedAsAnOutlier() throws {
        // The venue's level is known: with it unknown, a device heard only at 10 m by the one
        // gateway is as well explained by a venue that reads 13 dB low (`VenueLevelTests`).
        var d = Driver(try Venue.line(2, radius: 3, levelKnown: true))
        d.run(for: 10, step: 0.2) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 10)) }
        #expect(d.states("r0").allSatisfy { $0.state != .inside })
        d.now += 0.2
        d.hear("g0", rssi: rssi(atDistance: 0.5))
        #expect(d.engine.counters.outliers == 1)
        #expect(d.states("r0").allSatisfy { $0.state != .inside })
        #expect(d.locations.isEmpty)
    }

    @Test func batchEntryWeighsItsCount() throws {
        var d = Driver(try Venue.line(2))
        let h = d.engine.handle(for: d.device)
        let entry = SightingBatch.Entry(device: d.device, count: 8, rssiMax: -55, rssiMean: -60, rssiLast: -61,
                                        tx: nil, first: 1000.1, last: 1000.9)
        var out: [FusionOutput] = []
        d.engine.ingest(entry, device: h, gateway: 0, into: &out)
        guard case .state(let s)? = out.first(where: { $0.type == "state" }) else { Issue.record("no state output"); return }
        #expect(s.t == 1000.9 && s.state == .inside)
    }
}
