import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The self-calibration's per-gateway offsets against a known answer: seconds drawn from the
/// tracker's own radio model, in the region the device is known to be in, taught to
/// `VenueCalibration` exactly as the engine teaches a confident second (docs/fusion.md
/// "Self-calibration"; the engine-level test is `TrackerModelTests.calibrationFindsAHotGateway…`).
@Suite struct GatewayOffsetTests {
    /// Teaches `seconds` seconds of a device dwelling 20 s in each region of a line of six in turn,
    /// heard by the gateways within two regions of it; gateway g reads `shift[g]` dB off the model
    /// plus 3 dB of noise. `b` is fitted as the tracker fits it (`DeviceState.evidence`): the
    /// readings' deviations with the corrections in use, shrunk by one reading's worth.
    static func taught(shift: [Double], seconds: Int = 3000) throws -> VenueCalibration {
        let site = try Venue.line(6, spacing: 8, radius: 3, levelKnown: true)
        let tables = FusionContext(site: site).tracker
        var c = VenueCalibration(site: site)
        let n = c.pathLossExponent, w = c.roomLossDB, power = -59.0, G = tables.gatewayCount
        var rng = SeededRandom(seed: 11)
        for second in 0..<seconds {
            let r = second / 20 % 6
            var heard: [RegionTracker.Heard] = []
            var sum: Float = 0
            for g in max(0, r - 2)...min(5, r + 2) {
                let model = power + n * Double(tables.logDistance[r * G + g]) - w * Double(tables.otherRoom[r * G + g])
                let reading = Float(model + shift[g] + rng.gaussian(sigma: 3))
                heard.append(RegionTracker.Heard(gateway: Int32(g), sum: reading, count: 1))
                sum += reading + c.appliedOffset(g) - Float(model + c.powerCorrectionDB)
            }
            let b = sum / (Float(heard.count) + 1)
            c.learn(region: r, readings: heard, b: b, measuredPower: power, tables: tables)
            c.refresh()
        }
        return c
    }

    @Test func aGatewayReading8dBHotIsLearnedAtItsShiftAndTheOthersAtZero() throws {
        let c = try Self.taught(shift: [0, 0, 8, 0, 0, 0])
        // Before offsets and levels were fitted jointly, relative to the median: 6.6 dB, with the
        // other gateways pushed 1.0–1.6 dB cold (and a gateway 8 dB cold learned at −6.5).
        #expect(abs(c.gatewayOffsetDB[2] - 8) < 1, "\(c.gatewayOffsetDB)")
        for g in [0, 1, 3, 4, 5] { #expect(abs(c.gatewayOffsetDB[g]) < 1, "\(c.gatewayOffsetDB)") }
        // The correction applied is the part beyond the dead zone.
        #expect(abs(c.appliedCorrectionsDB[2] + (c.gatewayOffsetDB[2] - VenueCalibration.offsetDeadZoneDB)) < 1e-4)
    }

    @Test func aColdGatewayIsLearnedAsColdAsAHotOneIsHot() throws {
        let hot = try Self.taught(shift: [0, 0, 0, 8, 0, 0])
        let cold = try Self.taught(shift: [0, 0, 0, -8, 0, 0])
        #expect(abs(cold.gatewayOffsetDB[3] + 8) < 1, "\(cold.gatewayOffsetDB)")
        #expect(abs(hot.gatewayOffsetDB[3] + cold.gatewayOffsetDB[3]) < 1, "\(hot.gatewayOffsetDB) \(cold.gatewayOffsetDB)")
    }

    @Test func offsetsCommonToEveryGatewayAreTheVenueLevelNotTheGateways() throws {
        // Every gateway 5 dB hot: the measured-power correction's, no gateway stands out.
        let c = try Self.taught(shift: Array(repeating: 5, count: 6))
        for g in 0..<6 { #expect(abs(c.gatewayOffsetDB[g]) < 1, "\(c.gatewayOffsetDB)") }
        #expect(abs(c.powerCorrectionDB - 5) < 1.5, "\(c.powerCorrectionDB)")
    }
}
