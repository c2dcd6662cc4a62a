import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The venue's level, exponent and room loss learned from every second by the tracker's belief,
/// not only from the seconds it is sure of (`DeviceState.teachLevel`, `VenueCalibration.learnLevel`,
/// `learnShape`), and the region's expected log-distance as the mean over its disc
/// (`TrackerTables.meanLogDistance`).
@Suite struct CalibrationFromEverySecondTests {
    /// Analytic mean of −5·log10(ρ² + c) over a uniform disc of radius R centred on the gateway:
    /// with u = ρ²/R² uniform on [0, 1], E[ln(R²u + c)] = ((R² + c)·ln(R² + c) − c·ln c)/R² − 1.
    static func centredMean(radius r: Double, height2 c: Double) -> Double {
        let r2 = r * r
        let meanLn = ((r2 + c) * log(r2 + c) - c * log(c)) / r2 - 1
        return -5 * meanLn / log(10)
    }

    @Test func theExpectedLogDistanceIsTheMeanOverTheRegion() {
        // A gateway at the region's centre: the quadrature against the closed form.
        for (r, c) in [(3.0, 1.0), (6.0, 1.0), (2.0, 17.0)] {
            let q = TrackerTables.meanLogDistance(centre: 0, radius: r, height2: c)
            #expect(abs(q - Self.centredMean(radius: r, height2: c)) < 0.05, "radius \(r): \(q) vs \(Self.centredMean(radius: r, height2: c))")
            // Jensen: above the log of the root-mean-square distance (what the table held before).
            #expect(q > -5 * log10(r * r / 2 + c))
        }
        // A gateway far from a small region: the mean is the centre's within a few hundredths.
        let far = TrackerTables.meanLogDistance(centre: 30, radius: 2, height2: 1)
        #expect(abs(far - (-5 * log10(901.0))) < 0.05, "\(far)")
        // No radius: the centre's distance.
        #expect(TrackerTables.meanLogDistance(centre: 4, radius: 0, height2: 9) == -5 * log10(25.0))
    }

    @Test func aDeviceNoSecondIsSureOfStillTeachesTheVenuesLevel() throws {
        // A device standing exactly between two regions 6 m apart on an open line: the tracker is
        // seldom 90 % sure of either, so few seconds are confident ones. The venue reads 10 dB above
        // the configured measured power. Both regions put the device at the same level, so every
        // second says what the level is: learned within a few dB, and its uncertainty narrowed,
        // where before only the few confident seconds taught it and it stayed wide.
        var rng = SeededRandom(seed: 3)
        var d = Driver(try Venue.line(3, spacing: 6, radius: 3))
        let prior = d.engine.ctx.levelPriorVariance
        d.run(for: 90, step: 0.5) { d in
            d.heartbeat()
            for (g, x) in [("g0", 0.0), ("g1", 6.0), ("g2", 12.0)] {
                let distance = ((3 - x) * (3 - x) + 1).squareRoot()
                d.hear(g, rssi: min(-1, rssi(atDistance: distance) + 10 + rng.gaussian(sigma: 2)))
            }
        }
        let c = d.engine.calibration
        #expect(c.updates < 10, "confident seconds: \(c.updates)")
        #expect(c.levelEvidence > 60 && c.levelEvidence > 6 * c.updates, "\(c.levelEvidence) vs \(c.updates)")
        #expect(abs(c.powerCorrectionDB - 10) < 3, "\(c.powerCorrectionDB)")
        #expect(c.levelVariance(prior: prior) < 5, "\(c.levelVariance(prior: prior))")
    }

    @Test func aSecondSplitBetweenRegionsAtDifferentDistancesCountsLessThanACertainOne() throws {
        let site = try Venue.line(3, spacing: 6, radius: 3)
        let ctx = FusionContext(site: site)
        let heard = [RegionTracker.Heard(gateway: 0, sum: -60, count: 1), RegionTracker.Heard(gateway: 2, sum: -75, count: 1)]
        let slots = [DeviceState.Slot(region: 0, lastQualifying: 0), DeviceState.Slot(region: 2, lastQualifying: 0)]
        func taught(posterior: [Float], shifts: [Float]) -> Double {
            var c = VenueCalibration(site: site)
            shifts.withUnsafeBufferPointer { s in
                [Float](repeating: 0, count: 2).withUnsafeBufferPointer { f in
                    DeviceState.teachLevel(heard: heard, posterior: posterior, slots: slots, shifts: s, fits: f, fitGate: -1,
                                           levelGate: 30, power: -59, ctx.tracker, &c)
                }
            }
            return c.levelEvidence
        }
        // Sure of one region: a whole second.
        #expect(abs(taught(posterior: [1, 0], shifts: [0, 12]) - 1) < 1e-6)
        // Split evenly between regions whose fitted levels differ by 12 dB (variance 36, the device
        // spread's square): half a second.
        #expect(abs(taught(posterior: [0.5, 0.5], shifts: [-6, 6]) - 0.5) < 1e-6)
        // Most of the belief on a region whose fit fails the gate: only the rest counts.
        var c = VenueCalibration(site: site)
        [Float](arrayLiteral: 0, 0).withUnsafeBufferPointer { s in
            [Float](arrayLiteral: -5, 0).withUnsafeBufferPointer { f in
                DeviceState.teachLevel(heard: heard, posterior: [0.8, 0.2], slots: slots, shifts: s, fits: f, fitGate: -1,
                                       levelGate: 30, power: -59, ctx.tracker, &c)
            }
        }
        #expect(abs(c.levelEvidence - 0.2) < 1e-6)
        // Split between regions that give the same level: the probability alone.
        #expect(abs(taught(posterior: [0.5, 0.5], shifts: [2, 2]) - 1) < 1e-6)
    }
}
