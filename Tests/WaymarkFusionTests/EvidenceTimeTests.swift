import Testing
import WaymarkCore
@testable import WaymarkFusion

/// Changes carry the time of their evidence: a switch is dated when the winning lead began, the
/// exit buffer starts at the last sighting that really placed the device inside, and the regions
/// inferred on a non-adjacent jump fill the time between leaving the old region and the switch.
@Suite struct EvidenceTimeTests {
    @Test func rejectedReadingsDoNotHoldTheRegion() throws {
        // Inside r0 at 1 m, then three readings 32 dB weaker (a device walking away, rejected as
        // outliers within the outlier run of 3), then silence. The region's exit buffer runs from
        // the last accepted reading, not from the rejected ones; the device itself was heard until
        // the last rejected one, so its visit ends there.
        var d = Driver(try Venue.line(2, spacing: 30, radius: 3, fusion: "self_calibration: false"))
        d.run(for: 10) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        let lastInside = d.now
        d.run(for: 3) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 20)) }
        let lastHeard = d.now
        d.run(for: 40) { $0.heartbeat() }
        let exit = try #require(d.states("r0").last)
        #expect(exit.state == .outside)
        #expect(exit.t == lastInside + 30)
        #expect(d.locations.last?.region == nil && d.locations.last?.t == lastHeard + 30)
        #expect(d.visits.last?.exited == lastHeard)
    }

    @Test func rejectedReadingsDoNotEnterARegion() throws {
        // r1 is heard far away for a while, then one reading that would place the device at 1 m:
        // the filter rejects it as an outlier, so r1 is not entered by it.
        var d = Driver(try Venue.line(2, spacing: 30, radius: 3, fusion: "self_calibration: false"))
        d.run(for: 10) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)); d.hear("g1", rssi: rssi(atDistance: 29)) }
        d.run(for: 1) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)); d.hear("g1", rssi: rssi(atDistance: 1)) }
        #expect(!d.states("r1").contains { $0.state == .inside })
    }

    @Test func inferredVisitsShareTheGapBetweenLeavingAndSwitching() throws {
        var d = Driver(try Venue.line(4, spacing: 10, radius: 3))
        d.run(for: 10) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        let left = d.now
        // Unheard for 20 s (time to walk through r1 and r2), then by r3.
        d.run(for: 20) { $0.heartbeat() }
        d.run(for: 10, step: 0.5) { d in d.heartbeat(); d.hear("g3", rssi: rssi(atDistance: 1)) }
        #expect(d.locations.map(\.region) == ["r0", "r3"])
        let switched = try #require(d.locations.last?.t)
        #expect(switched > left)
        let visits = d.visits
        #expect(visits.map(\.region) == ["r0", "r1", "r2"])
        // r0 ends at its last sighting; r1 and r2 split the rest up to the switch, in order.
        #expect(visits[0].exited == left && !visits[0].inferred)
        #expect(visits[1].inferred && visits[1].entered == left)
        #expect(visits[1].exited == visits[2].entered && visits[1].exited > left)
        #expect(visits[2].inferred && visits[2].exited == switched)
        #expect(abs((visits[1].exited - visits[1].entered) - (visits[2].exited - visits[2].entered)) < 1e-6)
        let times = d.transitions.map(\.t)
        #expect(times == [left, visits[2].entered, switched])
    }

    @Test func adjacentSwitchClosesTheOldVisitAtTheSwitch() throws {
        var d = Driver(try Venue.line(2, spacing: 10, radius: 3))
        d.run(for: 10) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        let firstInR1 = d.now + 1
        d.run(for: 10) { d in d.heartbeat(); d.hear("g1", rssi: rssi(atDistance: 1)) }
        let switched = try #require(d.locations.last?.t)
        #expect(d.locations.map(\.region) == ["r0", "r1"])
        // r0's stale 1 m reading keeps r1 from leading until r0 goes stale (5 s), but r1 has been
        // the only region within its radius since its first reading: that is when the switch was.
        #expect(switched == firstInR1)
        #expect(try #require(d.locationReports.last?.at) > firstInR1)
        #expect(d.visits.map(\.exited) == [switched])
        #expect(d.transitions.map(\.t) == [switched])
        #expect(try #require(d.locationReports.last?.at) >= switched)
    }
}
