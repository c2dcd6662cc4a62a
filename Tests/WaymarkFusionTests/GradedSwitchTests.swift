import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The graded switching rule (a clear lead switches after `strong_switch_dwell_s`, a small lead
/// after `switch_dwell_s`) and the rule that only a region within its radius now may challenge.
@Suite struct GradedSwitchTests {
    /// Two adjacent regions 6 m apart, both radius 5 m; the device stands at `x` metres from g0.
    func hearAt(_ x: Double) -> (inout Driver) -> Void {
        { d in
            d.heartbeat()
            d.hear("g0", rssi: rssi(atDistance: max(0.3, x)))
            d.hear("g1", rssi: rssi(atDistance: max(0.3, 6 - x)))
        }
    }

    /// Seconds from the move to `x` until the current region changed, or nil when it never did.
    func switchDelay(to x: Double, fusion: String) throws -> Double? {
        var d = Driver(try Venue.line(2, spacing: 6, radius: 5, fusion: fusion))
        d.run(for: 10, step: 0.2, hearAt(1))
        let moved = d.now
        d.run(for: 15, step: 0.2, hearAt(x))
        guard d.locations.count > 1 else { return nil }
        #expect(d.locations.map(\.region) == ["r0", "r1"])
        return try #require(d.locationReports.last?.at) - moved
    }

    @Test func strongLeadSwitchesBeforeTheOrdinaryDwell() throws {
        // At 5 m from g0 and 1 m from g1 the lead is 17 dB: far above the 8 dB strong margin.
        let fusion = "switch_dwell_s: 4\nnonadjacent_dwell_s: 8\nstrong_switch_dwell_s: 0.5"
        let fast = try #require(try switchDelay(to: 5, fusion: fusion))
        #expect(fast < 4, "a strong lead must not wait the 4 s ordinary dwell")
        let slow = try #require(try switchDelay(to: 5, fusion: fusion + "\nstrong_switch_margin_db: 40"))
        #expect(slow >= 4, "without the shortcut the 4 s dwell applies")
        #expect(fast < slow)
    }

    @Test func smallLeadStillNeedsTheOrdinaryDwell() throws {
        // 3.8 m vs 2.2 m: a lead of 5.9 dB, above the 3 dB margin and below the 8 dB strong margin.
        let delay = try #require(try switchDelay(to: 3.8, fusion: "switch_dwell_s: 4\nnonadjacent_dwell_s: 8"))
        #expect(delay >= 4)
    }

    @Test func strongSwitchParametersAreValidated() throws {
        var p = FusionParameters()
        p.strongSwitchMarginDB = 1
        p.strongSwitchDwellS = 5
        let keys = p.problems().map(\.key)
        #expect(keys.contains("strong_switch_margin_db"))
        #expect(keys.contains("strong_switch_dwell_s"))
        #expect(FusionParameters().problems().isEmpty)
    }

    @Test func regionStillInsideFromOldEvidenceCannotChallenge() throws {
        // Two regions 10 m apart, radius 4 m. The device visits r1, returns to r0, then
        // r1 is still `inside` (its exit timer runs 30 s) but its distance is now 5+ m, beyond the
        // radius. A burst that makes r1 look a little closer than r0 without bringing it inside its
        // radius must not switch while the rule is on.
        func run(_ fusion: String) throws -> [String?] {
            var d = Driver(try Venue.line(2, spacing: 10, radius: 4, fusion: fusion))
            d.run(for: 10, step: 0.2) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 1)); d.hear("g1", rssi: rssi(atDistance: 9)) }
            d.run(for: 10, step: 0.2) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 9)); d.hear("g1", rssi: rssi(atDistance: 1)) }
            d.run(for: 10, step: 0.2) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 2)); d.hear("g1", rssi: rssi(atDistance: 8)) }
            // r0 weakens to 8 m (outside its radius but still `inside`), r1 at 5 m: r1 leads by
            // 5.1 dB yet is beyond its 4 m radius.
            d.run(for: 8, step: 0.2) { d in d.heartbeat(); d.hear("g0", rssi: rssi(atDistance: 8)); d.hear("g1", rssi: rssi(atDistance: 5)) }
            return d.locations.map(\.region)
        }
        #expect(try run("") == ["r0", "r1", "r0"])
        #expect(try run("challenger_within_radius: false") == ["r0", "r1", "r0", "r1"])
    }
}

extension GradedSwitchTests {
    @Test func briefStrongLeadIsAShortVisit() throws {
        // The same 2 s excursion that the ordinary 4 s dwell ignores: with the strong-lead shortcut
        // (8 dB, 0 s) it is recorded, as a short pass through r1 would be.
        var d = Driver(try Venue.line(2, spacing: 6, radius: 5, fusion: "switch_dwell_s: 4\nnonadjacent_dwell_s: 8"))
        d.run(for: 10, step: 0.2, hearAt(1.5))
        d.run(for: 2, step: 0.2, hearAt(5.5))
        d.run(for: 20, step: 0.2, hearAt(1.5))
        #expect(d.locations.map(\.region) == ["r0", "r1", "r0"])
    }
}
