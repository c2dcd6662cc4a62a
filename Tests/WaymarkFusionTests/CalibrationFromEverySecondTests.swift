import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The venue's level and the gateways' offsets learned from every second by the tracker's belief,
/// not only from the seconds it is sure of (`DeviceState.teachFromBelief`, `VenueCalibration.learnLevel`,
/// `learnOffsets`), and the region's expected log-distance as the mean over its disc
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
        // A device lingering about the boundary between two regions 6 m apart on an open line (2 to
        // 4 m from the first gateway and back every 20 s): the tracker is seldom 90 % sure of either
        // region (16 of 180 seconds). The venue reads 10 dB above the configured measured power.
        // Both regions put the device at much the same level, so every second says what the level
        // is: learned within a few dB, its uncertainty narrowed to about 1 dB² (the 16 confident
        // seconds alone, the rule before, left it at 5.5 dB²).
        var rng = SeededRandom(seed: 3)
        var d = Driver(try Venue.line(3, spacing: 6, radius: 3))
        let prior = d.engine.ctx.levelPriorVariance
        var step = 0
        d.run(for: 90, step: 0.5) { d in
            d.heartbeat()
            step += 1
            // To and fro across the boundary, 2 to 4 m from g0, once every 20 s.
            let at = 3 + sin(Double(step) * .pi / 20)
            for (g, x) in [("g0", 0.0), ("g1", 6.0), ("g2", 12.0)] {
                let distance = ((at - x) * (at - x) + 1).squareRoot()
                d.hear(g, rssi: min(-1, rssi(atDistance: distance) + 10 + rng.gaussian(sigma: 2)))
            }
        }
        let c = d.engine.calibration
        #expect(c.updates < 30, "confident seconds: \(c.updates)")
        #expect(c.levelEvidence > 60 && c.levelEvidence > 3 * c.updates, "\(c.levelEvidence) vs \(c.updates)")
        #expect(abs(c.powerCorrectionDB - 10) < 3, "\(c.powerCorrectionDB)")
        #expect(c.levelVariance(prior: prior) < 2, "\(c.levelVariance(prior: prior))")
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
                    DeviceState.teachFromBelief(heard: heard, posterior: posterior, slots: slots, shifts: s, fits: f, fitGate: -1,
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
                DeviceState.teachFromBelief(heard: heard, posterior: [0.8, 0.2], slots: slots, shifts: s, fits: f, fitGate: -1,
                                       levelGate: 30, power: -59, ctx.tracker, &c)
            }
        }
        #expect(abs(c.levelEvidence - 0.2) < 1e-6)
        // Split between regions that give the same level: the probability alone.
        #expect(abs(taught(posterior: [0.5, 0.5], shifts: [2, 2]) - 1) < 1e-6)
    }

    @Test func aSecondsDeviationsAreAveragedOverTheBeliefAndACertainRegionIsTheOldRule() throws {
        let site = try Venue.line(3, spacing: 6, radius: 3)
        let tables = FusionContext(site: site).tracker
        let G = tables.gatewayCount, power = -59.0
        let heard = [RegionTracker.Heard(gateway: 0, sum: -62, count: 1), RegionTracker.Heard(gateway: 1, sum: -70, count: 1),
                     RegionTracker.Heard(gateway: 2, sum: -160, count: 2)]
        // Each reading's deviation from the model in region r, the second's level fitted from the
        // same readings (no offsets learned yet).
        func deviations(_ r: Int, _ c: VenueCalibration) -> [Double] {
            let model = heard.map {
                c.pathLossExponent * Double(tables.logDistance[r * G + Int($0.gateway)]) - c.roomLossDB * Double(tables.otherRoom[r * G + Int($0.gateway)])
            }
            let rssi = heard.map { Double($0.sum / $0.count) }
            let level = zip(rssi, model).map { $0 - $1 }.reduce(0, +) / Double(heard.count)
            return zip(rssi, model).map { $0 - $1 - level }
        }
        var certain = VenueCalibration(site: site)
        certain.learnOffsets(readings: heard, measuredPower: power, tables: tables, hypotheses: 1, region: { _ in 0 }, probability: { _ in 1 })
        let d0 = deviations(0, certain), d2 = deviations(2, certain)
        for g in 0..<3 { #expect(abs(certain.offsetSum[g] - d0[g]) < 1e-4, "\(certain.offsetSum) vs \(d0)") }
        // A confident second of region 0 (`learn`, as a walk test's stay) teaches the same.
        var stay = VenueCalibration(site: site)
        stay.learn(region: 0, readings: heard, b: 0, measuredPower: power, tables: tables)
        #expect(stay.offsetSum == certain.offsetSum)
        // Three quarters on region 0, a quarter on region 2: the mean deviation by those weights.
        var split = VenueCalibration(site: site)
        split.learnOffsets(readings: heard, measuredPower: power, tables: tables, hypotheses: 2,
                           region: { $0 == 0 ? 0 : 2 }, probability: { $0 == 0 ? 0.6 : 0.2 })
        for g in 0..<3 {
            #expect(abs(split.offsetSum[g] - (0.75 * d0[g] + 0.25 * d2[g])) < 1e-4, "\(split.offsetSum)")
            #expect(split.offsetCount[g] == 1)
        }
        // A confident second that is not a stay teaches the exponent, not the offsets or level.
        var tracked = VenueCalibration(site: site)
        tracked.learn(region: 0, readings: heard, b: 0, measuredPower: power, tables: tables, certain: false)
        #expect(tracked.offsetCount == [0, 0, 0] && tracked.levelTerms == nil && tracked.updates == 1 && tracked.sxx > 0)
    }

    @Test func everySecondTeachesTheOffsetsAndAHotGatewayComesOutHottest() throws {
        // A device walking to and fro along a line of four regions 5 m apart at 1 m/s, every
        // gateway hearing it each second with 3 dB of noise, the third gateway 8 dB hot. Under
        // half the seconds are 90 % sure of a region; every second teaches the offsets by the
        // belief. With one device the hot gateway is learned well short of its shift (+2.3 dB:
        // it pulls the belief towards its own region, where it looks less hot; the confident
        // seconds alone learned +2.4), but it comes out the hottest.
        var rng = SeededRandom(seed: 7)
        var d = Driver(try Venue.line(4, spacing: 5, radius: 2.5))
        var x = 0.0, v = 1.0
        d.run(for: 400, step: 1) { d in
            d.heartbeat()
            x += v
            if x >= 15 || x <= 0 { v = -v }
            for g in 0..<4 {
                let distance = ((x - Double(g) * 5) * (x - Double(g) * 5) + 1).squareRoot()
                d.hear("g\(g)", rssi: min(-1, rssi(atDistance: distance) + (g == 2 ? 8 : 0) + rng.gaussian(sigma: 3)))
            }
        }
        let c = d.engine.calibration
        #expect(c.gatewayReadings.allSatisfy { $0 >= 399 && $0 > c.updates + 100 }, "\(c.gatewayReadings) readings, \(c.updates) confident seconds")
        for g in [0, 1, 3] { #expect(c.gatewayOffsetDB[2] > c.gatewayOffsetDB[g] + 1, "\(c.gatewayOffsetDB)") }
        #expect(c.gatewayOffsetDB[2] > 1.5, "\(c.gatewayOffsetDB)")
    }
}
