import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// A tag that stays at one place teaches the venue's calibration that place for two minutes' worth
/// at most (`VenueCalibration.stayWeight`, `DeviceState.placeSince`): its shadowing there is not
/// a property of the gateways.
@Suite struct ParkedTagTeachingTests {
    @Test func aStayTeachesFullyForAMinuteThenFadesOut() {
        let s = VenueCalibration.stayTeachingS
        #expect(VenueCalibration.stayWeight(dwell: 0) == 1)
        #expect(VenueCalibration.stayWeight(dwell: s) == 1)
        #expect(abs(VenueCalibration.stayWeight(dwell: 2 * s) - exp(-1)) < 1e-12)
        #expect(VenueCalibration.stayWeight(dwell: 3 * s) < VenueCalibration.stayWeight(dwell: 2 * s))
        // However long the stay, it teaches about two minutes' worth in all (1-s steps).
        let hour = (0..<3_600).reduce(0.0) { $0 + VenueCalibration.stayWeight(dwell: Double($1)) }
        #expect(hour > 1.9 * s && hour < 2.1 * s, "\(hour)")
        let day = (0..<86_400).reduce(0.0) { $0 + VenueCalibration.stayWeight(dwell: Double($1)) }
        #expect(abs(day - hour) < 1e-6)
    }

    /// A line of three regions 6 m apart; a tag parked in the first region, 2 m from its gateway,
    /// where the gateways read +6, −6 and 0 dB off the model (its place's shadowing, for good), and
    /// later a second tag walking the line to and fro with no such deviation. What the venue learns
    /// must be the walker's radio, not the parked tag's place.
    @Test func aParkedTagDoesNotTeachTheGatewaysItsPlace() throws {
        var rng = SeededRandom(seed: 11)
        var d = Driver(try Venue.line(3, spacing: 6, radius: 3))
        let parked = DeviceID("mac:02-00-00-00-00-99")!
        let gateways = [("g0", 0.0, 6.0), ("g1", 6.0, -6.0), ("g2", 12.0, 0.0)]
        func hearParked(_ d: inout Driver) {
            for (g, x, deviation) in gateways {
                let distance = ((2 - x) * (2 - x) + 1).squareRoot()
                d.hear(g, rssi: min(-1, rssi(atDistance: distance) + deviation + rng.gaussian(sigma: 2)), device: parked)
            }
        }
        // Half an hour of the parked tag alone.
        d.run(for: 1_800, step: 0.5) { d in
            d.heartbeat()
            hearParked(&d)
        }
        let alone = d.engine.calibration
        // What half an hour taught, per gateway and of the level: two minutes' worth, not 1,800 s.
        for g in 0..<3 { #expect(alone.offsetCount[g] < 150, "gateway \(g): \(alone.offsetCount[g])") }
        #expect(alone.levelEvidence < 150, "\(alone.levelEvidence)")

        // Then ten minutes of a walker as well, from one end of the line to the other and back.
        var step = 0
        d.run(for: 600, step: 0.5) { d in
            d.heartbeat()
            hearParked(&d)
            step += 1
            let at = 6 - 7 * cos(Double(step) * .pi / 60)  // −1 … 13 m, one way per 30 s
            for (g, x, _) in gateways {
                let distance = ((at - x) * (at - x) + 1).squareRoot()
                d.hear(g, rssi: min(-1, rssi(atDistance: distance) + rng.gaussian(sigma: 2)))
            }
        }
        let c = d.engine.calibration
        // The walker's radio falls off with exponent 2 and has no walls (the line's regions are
        // rooms of their own: the model's room loss would be 0). The parked tag's place, taught for
        // its whole half hour, pulled the exponent to its lower bound, 1.6, and the room loss to
        // 8.0 dB; taught its two minutes' worth, 1.93 and 3.9 dB.
        #expect(abs(c.pathLossExponent - 2) < 0.2, "\(c.pathLossExponent)")
        #expect(c.roomLossDB < VenueCalibration.defaultRoomLossDB, "\(c.roomLossDB)")
        // The parked tag's ±6 dB is its place: none of it is applied to the gateways' readings.
        for g in 0..<3 {
            #expect(c.appliedOffset(g) == 0, "gateway \(g): learned \(c.gatewayOffsetDB[g]), applied \(c.appliedOffset(g))")
            #expect(abs(c.gatewayOffsetDB[g]) < 2.5, "gateway \(g): \(c.gatewayOffsetDB[g])")
        }
    }
}
