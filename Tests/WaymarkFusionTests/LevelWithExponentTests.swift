import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The venue's level (the measured-power correction) learned together with the path-loss exponent:
/// the level a confident second gives depends on the exponent it is read with, and the exponent is
/// learned from the same seconds, so the correction is kept as running means of each second's
/// level terms and evaluated at the exponent learned now (`VenueCalibration.levelTerms`).
@Suite struct LevelWithExponentTests {
    /// Teaches `seconds` confident seconds of a device dwelling 20 s in each region of a line of
    /// six, heard by every gateway, in a venue whose readings follow the model with exponent
    /// `exponent`, the configured measured power (level 0) and 2 dB of noise.
    static func taught(exponent: Double, seconds: Int) throws -> VenueCalibration {
        let site = try Venue.line(6, spacing: 8, radius: 3)
        let tables = FusionContext(site: site).tracker
        var c = VenueCalibration(site: site)
        let power = -59.0, G = tables.gatewayCount
        var rng = SeededRandom(seed: 5)
        for second in 0..<seconds {
            let r = second / 20 % 6
            var heard: [RegionTracker.Heard] = []
            var sum: Float = 0
            for g in 0..<6 {
                let reading = Float(power + exponent * Double(tables.logDistance[r * G + g]) + rng.gaussian(sigma: 2))
                heard.append(RegionTracker.Heard(gateway: Int32(g), sum: reading, count: 1))
                let model = power + c.powerCorrectionDB + c.pathLossExponent * Double(tables.logDistance[r * G + g])
                sum += reading + c.appliedOffset(g) - Float(model)
            }
            c.learn(region: r, readings: heard, b: sum / Float(heard.count + 1), measuredPower: power, tables: tables)
            c.refresh()
        }
        return c
    }

    @Test func aVenueWhoseExponentIsNotThePriorGetsItsLevelRightAsTheExponentIsLearned() throws {
        // The prior exponent is 2.0; this venue's is 2.8. Read at the exponent of their moment, the
        // first seconds put the level several dB low, and a running mean of those levels kept it
        // there long after the exponent was learned: −3.1 dB after 60 confident seconds (exponent
        // 2.66 by then), −1.4 dB after 150. Read from the level terms at the exponent learned now:
        // −0.6 and −0.3 dB.
        let c = try Self.taught(exponent: 2.8, seconds: 60)
        #expect(abs(c.pathLossExponent - 2.8) < 0.25, "\(c.pathLossExponent)")
        #expect(abs(c.powerCorrectionDB) < 1.0, "\(c.powerCorrectionDB)")
    }

    @Test func theCorrectionIsTheLevelTermsAtTheCurrentExponent() throws {
        let c = try Self.taught(exponent: 2.4, seconds: 40)
        let t = try #require(c.levelTerms)
        #expect(abs(c.powerCorrectionDB - (t.y - c.pathLossExponent * t.x + c.roomLossDB * t.z)) < 1e-9)
    }

    @Test func aCheckpointSavedBeforeTheLevelTermsResumesWhereItsCorrectionWas() throws {
        let c = try Self.taught(exponent: 1.7, seconds: 30)
        let saved = try JSONEncoder().encode(c)
        var object = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
        object["levelTerms"] = nil
        object["powerCorrectionDB"] = 4.0
        var old = try JSONDecoder().decode(VenueCalibration.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(old.levelTerms == nil && old.powerCorrectionDB == 4.0)
        // A second whose level is exactly the saved correction leaves it where it was.
        let site = try Venue.line(6, spacing: 8, radius: 3)
        let tables = FusionContext(site: site).tracker
        let power = -59.0
        let heard = (0..<6).map { g in
            RegionTracker.Heard(gateway: Int32(g),
                                sum: Float(power + 4.0 + old.pathLossExponent * Double(tables.logDistance[g])
                                    - old.roomLossDB * Double(tables.otherRoom[g]) - Double(old.appliedOffset(g))),
                                count: 1)
        }
        old.learn(region: 0, readings: heard, b: 0, measuredPower: power, tables: tables)
        #expect(abs(old.powerCorrectionDB - 4.0) < 1e-3, "\(old.powerCorrectionDB)")
        #expect(old.levelTerms != nil)
    }
}
