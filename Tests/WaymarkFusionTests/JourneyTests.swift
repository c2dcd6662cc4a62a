import Testing
import WaymarkCore
@testable import WaymarkFusion

@Suite struct JourneyTests {
    @Test func journeyEndsAfterTheTimeoutOutsideEveryRegion() throws {
        var d = Driver(try Venue.line(3, spacing: 10, radius: 3))
        d.run(for: 10) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        d.run(for: 10) { d in d.heartbeat(); d.hear("g1", rssi: rssi(atDistance: 1)) }
        let lastSeen = d.now
        // Outside every region from the last evidence on (the exit itself is declared 30 s later).
        d.run(for: 599) { $0.heartbeat() }
        #expect(d.journeys.isEmpty, "the journey is still open 599 s after leaving")
        d.run(for: 1) { $0.heartbeat() }
        let j = try #require(d.journeys.first)
        #expect(j.regions == ["r0", "r1"])
        #expect(j.started == 1001)
        #expect(j.ended == lastSeen)
        #expect(j.t == lastSeen + 600)
    }

    @Test func returningBeforeTheTimeoutContinuesTheJourney() throws {
        var d = Driver(try Venue.line(3, spacing: 10, radius: 3, fusion: "journey_timeout_s: 120"))
        d.run(for: 5) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        d.run(for: 90) { $0.heartbeat() }  // left r0 (exit after 30 s), outside 60 s
        d.run(for: 5) { d in d.heartbeat(); d.hear("g1", rssi: rssi(atDistance: 1)) }
        d.run(for: 200) { $0.heartbeat() }
        #expect(d.journeys.count == 1)
        #expect(d.journeys.first?.regions == ["r0", "r1"])
        #expect(d.visits.map(\.region) == ["r0", "r1"])
    }

    @Test func finishClosesOpenVisitsAndJourneysAtTheLastInputTime() throws {
        var d = Driver(try Venue.line(2))
        d.run(for: 20) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        d.outputs += d.engine.finish(at: d.now)
        let v = try #require(d.visits.last)
        #expect(v.region == "r0" && v.entered == 1001 && v.exited == 1020 && v.dwellS == 19)
        let j = try #require(d.journeys.last)
        #expect(j.started == 1001 && j.ended == 1020 && j.regions == ["r0"])
    }

    @Test func longJourneysAreBoundedByJourneyMaxRegions() throws {
        var d = Driver(try Venue.line(12, spacing: 10, radius: 3, fusion: "journey_max_regions: 4"))
        for i in 0..<12 { d.run(for: 10) { d in d.heartbeat(); d.hear("g\(i)", rssi: rssi(atDistance: 1)) } }
        d.outputs += d.engine.finish(at: d.now)
        #expect(d.visits.count == 12)
        #expect(d.journeys.first?.regions == ["r0", "r1", "r2", "r3"])
    }
}
