import Testing
import WaymarkCore
@testable import WaymarkFusion

@Suite struct CurrentRegionTests {
    /// Two adjacent regions 6 m apart, both radius 5 m; the device stands at `x` metres from g0.
    func hearAt(_ x: Double) -> (inout Driver) -> Void {
        { d in
            d.heartbeat()
            d.hear("g0", rssi: rssi(atDistance: max(0.3, x)))
            d.hear("g1", rssi: rssi(atDistance: max(0.3, 6 - x)))
        }
    }

    @Test func challengerWithinTheMarginNeverWins() throws {
        var d = Driver(try Venue.line(2, spacing: 6, radius: 5))
        d.run(for: 10, step: 0.2, hearAt(2))
        #expect(d.locations.map(\.region) == ["r0"])
        // 3.4 m vs 2.6 m is a lead of 2.9 dB, under the 3 dB margin.
        d.run(for: 60, step: 0.2, hearAt(3.4))
        #expect(d.locations.map(\.region) == ["r0"])
    }

    @Test func challengerBeyondTheMarginWinsAfterTheDwell() throws {
        // The strong-lead shortcut is switched off: this pins the ordinary margin-and-dwell rule.
        var d = Driver(try Venue.line(2, spacing: 6, radius: 5, fusion: "strong_switch_margin_db: 40"))
        d.run(for: 10, step: 0.2, hearAt(2))
        let moved = d.now
        d.run(for: 10, step: 0.2, hearAt(4.5))
        #expect(d.locations.map(\.region) == ["r0", "r1"])
        let switched = try #require(d.locationReports.last?.at)
        #expect(switched >= moved + 2, "the 2 s dwell must pass first")
        #expect(switched <= moved + 5, "the switch follows real movement within a few seconds")
        // The change itself carries the time the lead began, like the visit it closes.
        let changed = try #require(d.locations.last?.t)
        #expect(changed < switched && changed >= moved)
        #expect(d.visits.first?.exited == changed)
        #expect(d.transitions.map { "\($0.from)>\($0.to)" } == ["r0>r1"])
        #expect(d.visits.first?.region == "r0" && d.visits.first?.inferred == false)
    }

    @Test func briefLeadShorterThanTheDwellDoesNotSwitch() throws {
        // A 2 s lead of this size is a strong lead, which switches after strong_switch_dwell_s;
        // the shortcut is off here to pin the ordinary dwell.
        var d = Driver(try Venue.line(2, spacing: 6, radius: 5,
                                      fusion: "switch_dwell_s: 4\nnonadjacent_dwell_s: 8\nstrong_switch_margin_db: 40"))
        d.run(for: 10, step: 0.2, hearAt(1.5))
        d.run(for: 2, step: 0.2, hearAt(5.5))
        d.run(for: 20, step: 0.2, hearAt(1.5))
        #expect(d.locations.map(\.region) == ["r0"])
    }

    @Test func nonAdjacentJumpNeedsLongerEvidenceAndRecordsTheInferredPath() throws {
        var d = Driver(try Venue.line(4, spacing: 10, radius: 3))
        d.run(for: 10) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
        let jumped = d.now
        d.run(for: 15, step: 0.5) { d in d.heartbeat(); d.hear("g3", rssi: rssi(atDistance: 1)) }
        #expect(d.locations.map(\.region) == ["r0", "r3"])
        let switched = try #require(d.locationReports.last?.at)
        #expect(switched >= jumped + 5, "non-adjacent switches wait nonadjacent_dwell_s (5 s)")
        let visits = d.visits.map { "\($0.region):\($0.inferred)" }
        #expect(visits == ["r0:false", "r1:true", "r2:true"])
        #expect(d.transitions.map { "\($0.from)>\($0.to)" } == ["r0>r1", "r1>r2", "r2>r3"])
        #expect(d.monitored.last?.regions.first == "r3")
    }

    @Test func adjacentSwitchIsFasterThanNonAdjacent() throws {
        func switchDelay(to gateway: String) throws -> Double {
            var d = Driver(try Venue.line(3, spacing: 10, radius: 3))
            d.run(for: 10) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)) }
            let start = d.now
            d.run(for: 15, step: 0.5) { d in d.heartbeat(); d.hear(gateway, rssi: rssi(atDistance: 1)) }
            return try #require(d.locationReports.last?.at) - start
        }
        #expect(try switchDelay(to: "g1") < switchDelay(to: "g2"))
    }

    @Test func stationaryDeviceInNoiseDoesNotFlap() throws {
        var rng = SeededRandom(seed: 42)
        var d = Driver(try Venue.line(2, spacing: 8, radius: 6))
        // 3 m from g0, 5 m from g1, 5 readings per second each with σ = 5 dB noise and 1 % spikes
        // of +20 dB, for ten minutes.
        d.run(for: 600, step: 0.2) { d in
            d.heartbeat()
            for (g, dist) in [("g0", 3.0), ("g1", 5.0)] {
                var v = rssi(atDistance: dist) + rng.gaussian(sigma: 5)
                if Double.random(in: 0..<1, using: &rng) < 0.01 { v += 20 }
                d.hear(g, rssi: min(v, -1))
            }
        }
        #expect(d.locations.map(\.region) == ["r0"])
        #expect(d.engine.counters.outliers > 0)
    }

    @Test func currentRegionLeftForTheBestRemainingInsideRegion() throws {
        var d = Driver(try Venue.line(2, spacing: 6, radius: 5))
        d.run(for: 10, step: 0.5, hearAt(2.5))
        #expect(d.locations.map(\.region) == ["r0"])
        // g0 goes offline: r0 is unknown, r1 (still inside) takes over at once.
        d.outputs += d.engine.gatewayStatus(d.site.gatewayIndex("g0")!, online: false, at: d.now)
        #expect(d.locations.map(\.region) == ["r0", "r1"])
    }
}
