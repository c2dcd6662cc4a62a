import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
@testable import WaymarkFusion

/// The learned reception model (`ReceptionCalibration`): what a silent gateway says.
@Suite struct ReceptionCalibrationTests {
    @Test("the miss table, built with each logarithm once per distinct argument, is bit for bit the one built entry by entry")
    func theMissTableIsTheDirectOne() {
        var rng = SystemRandomNumberGenerator()
        for trial in 0..<50 {
            // Non-decreasing sensitivities, some bins equal; reliabilities repeating in runs (shared
            // rows), some beyond the clamps.
            var s: [Float] = []
            var level: Float = 0
            for _ in 0..<ReceptionCalibration.binCount {
                if Bool.random(using: &rng) { level = min(1, level + Float.random(in: 0...0.2, using: &rng)) }
                s.append(level)
            }
            let choices: [Float] = [0, 0.01, 0.5, 0.9, 0.97, 1, Float.random(in: 0...1, using: &rng)]
            var r: [Float] = []
            for _ in 0..<(1 + trial % 12) { r.append(choices.randomElement(using: &rng)!) }
            if trial % 3 == 0, let first = r.first { r.insert(first, at: 0) }
            let table = ReceptionCalibration.tables(sensitivity: s, reliability: r)
            #expect(table.count == r.count * ReceptionCalibration.tableSize)
            for (g, rg) in r.enumerated() {
                for i in 0..<ReceptionCalibration.tableSize {
                    let curve = ReceptionCalibration.interpolate(s, at: EvidenceModel.missFloor + Float(i) / ReceptionCalibration.tableStep)
                    let direct = log1pf(-min(max(rg * curve, ReceptionCalibration.minRate), ReceptionCalibration.maxRate))
                    #expect(table[g * ReceptionCalibration.tableSize + i].bitPattern == direct.bitPattern, "gateway \(g) step \(i)")
                }
            }
        }
    }

    @Test func beforeAnyDataItIsTheDefaultCurve() {
        let r = ReceptionCalibration(gatewayCount: 2)
        for mu: Float in [-96, -92, -88, -60] {
            // At a bin centre the table and the model's default curve agree:
            // maxDetection / (1 + exp(−(μ − mid) / width)).
            let p = EvidenceModel.maxDetection / (1 + expf(-(mu - EvidenceModel.detectionMidDBm) / EvidenceModel.detectionWidthDB))
            #expect(abs(r.rate(gateway: 1, at: mu) - p) < 0.01, "\(mu)")
            #expect(abs(r.rate(gateway: 0, at: mu) - p) < 0.01, "\(mu)")
        }
    }

    @Test func aGatewayThatMissesOftenIsLearnedAsUnreliable() {
        var r = ReceptionCalibration(gatewayCount: 3)
        // Gateways 0 and 1 report 95 % of their opportunities at −78 dBm expected, gateway 2 (a
        // louder link, −66 dBm) only 40 %: louder is not reported less often by the venue's
        // radios, so it is gateway 2 that is unreliable, not the signal level.
        for i in 0..<3000 {
            r.learn(gateway: 0, expected: -78, reported: i % 20 != 0)
            r.learn(gateway: 1, expected: -78, reported: i % 20 != 1)
            r.learn(gateway: 2, expected: -66, reported: i % 5 < 2)
        }
        r.refresh()
        // Its reliability is pooled towards the venue's (about 0.77 here, worth 500 opportunities):
        // (1200 + 500 · 0.77) / 3500 ≈ 0.45.
        #expect(r.rate(gateway: 2, at: -66) > 0.4 && r.rate(gateway: 2, at: -66) < 0.5, "\(r.rate(gateway: 2, at: -66))")
        #expect(r.rate(gateway: 0, at: -78) > 0.88, "\(r.rate(gateway: 0, at: -78))")
        #expect(r.reliability[2] < r.reliability[0] - 0.3, "\(r.reliability)")
        // A silence of gateway 2 now costs about log(0.55), one of gateway 0 about log(0.08).
        #expect(log(1 - r.rate(gateway: 2, at: -66)) > -0.7)
        #expect(log(1 - r.rate(gateway: 0, at: -66)) < -2)
    }

    @Test func theSensitivityFollowsTheDataAndNeverFallsWithLouderSignals() {
        var r = ReceptionCalibration(gatewayCount: 2)
        // Reception that falls off well above the default's −92 dBm midpoint: 90 % at −70 dBm, 20 %
        // at −82, at both gateways.
        for i in 0..<3000 {
            for g in 0..<2 {
                r.learn(gateway: g, expected: -70, reported: i % 10 != 0)
                r.learn(gateway: g, expected: -82, reported: i % 5 == 0)
            }
        }
        r.refresh()
        #expect(abs(r.rate(gateway: 0, at: -70) - 0.9) < 0.05, "\(r.rate(gateway: 0, at: -70))")
        #expect(abs(r.rate(gateway: 1, at: -82) - 0.2) < 0.05, "\(r.rate(gateway: 1, at: -82))")
        var previous: Float = 0
        for mu in stride(from: Float(-110), through: -30, by: 1) {
            #expect(r.rate(gateway: 0, at: mu) >= previous - 1e-6, "\(mu)")
            previous = r.rate(gateway: 0, at: mu)
        }
    }

    @Test func ratesStayWithinTheirBoundsAndCountsDecay() {
        var r = ReceptionCalibration(gatewayCount: 2)
        for _ in 0..<20_000 {
            r.learn(gateway: 0, expected: -50, reported: true)
            r.learn(gateway: 1, expected: -50, reported: false)
        }
        r.refresh()
        #expect(r.rate(gateway: 0, at: -50) <= ReceptionCalibration.maxRate + 1e-6)
        #expect(r.rate(gateway: 1, at: -50) >= ReceptionCalibration.minRate - 1e-6)
        #expect(r.opportunities(gateway: 1) <= ReceptionCalibration.memory + 1)
        // Unknown gateways are ignored, not a crash.
        r.learn(gateway: 7, expected: -50, reported: true)
        r.learn(gateway: -1, expected: -50, reported: true)
    }

    @Test func poolAdjacentViolatorsByHand() {
        #expect(ReceptionCalibration.nonDecreasing([1, 3, 2, 4], weights: [1, 1, 1, 1]) == [1, 2.5, 2.5, 4])
        #expect(ReceptionCalibration.nonDecreasing([3, 1], weights: [1, 3]) == [1.5, 1.5])
        #expect(ReceptionCalibration.nonDecreasing([1, 2, 3], weights: [1, 1, 1]) == [1, 2, 3])
    }

    @Test func checkpointsRoundTripAndOlderOnesStillRestore() throws {
        var engine = FusionEngine(site: try Venue.line(2))
        for i in 0..<500 { engine.calibration.reception.learn(gateway: i % 2, expected: -70, reported: i % 3 == 0) }
        engine.calibration.refresh()
        let data = try JSONEncoder().encode(engine.calibrationCheckpoint())
        var restored = FusionEngine(site: try Venue.line(2))
        restored.restore(calibration: try JSONDecoder().decode(CalibrationCheckpoint.self, from: data))
        #expect(restored.calibration == engine.calibration)
        #expect(restored.calibration.reception.missTable == engine.calibration.reception.missTable)
        // A checkpoint written before the model existed has no such key: the default curve.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object.removeValue(forKey: "reception")
        var old = FusionEngine(site: try Venue.line(2))
        old.restore(calibration: try JSONDecoder().decode(CalibrationCheckpoint.self, from: JSONSerialization.data(withJSONObject: object)))
        #expect(old.calibration.reception == ReceptionCalibration(gatewayCount: 2))
        #expect(old.calibration.powerCorrectionDB == engine.calibration.powerCorrectionDB)
    }

    @Test func remappingFollowsGatewaysById() {
        var r = ReceptionCalibration(gatewayCount: 3)
        for i in 0..<1000 { r.learn(gateway: 2, expected: -60, reported: i % 4 == 0) }
        r.refresh()
        // Gateway 2 becomes gateway 0 of a new list; old 0 is gone; new 1 is fresh.
        let m = r.remapped(to: 2, [nil, nil, 0])
        #expect(m.reliability[0] == r.reliability[2])
        #expect(m.reliability[1] == ReceptionCalibration.priorReliability)
        #expect(m.opportunities(gateway: 0) == r.opportunities(gateway: 2))
        #expect(m.rate(gateway: 0, at: -60) == r.rate(gateway: 2, at: -60))
    }
}

/// The engine with a gateway that reports its device in only some of the seconds.
@Suite struct UnreliableReceptionTests {
    /// A device standing 2 m from g0, 8 m from g1 and 18 m from g2. g0 reports it in 20 % of the
    /// seconds; the others every second. (At 35 % the two-phase dwell alone holds the device in r0
    /// nearly all the time even with the reception model frozen: 2 moves in the last 20 minutes.)
    func run(fusion: String) throws -> Driver {
        var rng = SeededRandom(seed: 5)
        var d = Driver(try Venue.line(3, spacing: 10, radius: 3, fusion: fusion))
        d.run(for: 1800) { d in
            d.heartbeat()
            if Double.random(in: 0..<1, using: &rng) < 0.2 { d.hear("g0", rssi: rssi(atDistance: 2) + rng.gaussian(sigma: 3)) }
            d.hear("g1", rssi: rssi(atDistance: 8) + rng.gaussian(sigma: 3))
            d.hear("g2", rssi: rssi(atDistance: 18) + rng.gaussian(sigma: 3))
        }
        return d
    }

    @Test func silencesOfAGatewayThatOftenMissesStopCountingAgainstItsRegion() throws {
        let learned = try run(fusion: "")
        let g0 = try #require(learned.site.gatewayIndex("g0")), g1 = try #require(learned.site.gatewayIndex("g1"))
        let reliability = learned.engine.calibration.gatewayReliability
        // (pooled towards the venue's: 20 % of its seconds weigh against the others' 100 %)
        #expect(reliability[g0] < 0.65, "g0 reliability \(reliability[g0])")
        #expect(reliability[g1] > 0.85, "g1 reliability \(reliability[g1])")
        // After the first ten minutes (learning), the device stays in r0.
        let late = learned.locations.filter { $0.t > 1_600 }
        #expect(late.allSatisfy { $0.region == "r0" }, "\(late.map { $0.region ?? "-" })")
        // With the model frozen at its default (self-calibration off), the same silences push it
        // to r1 again and again.
        let frozen = try run(fusion: "self_calibration: false")
        let learnedMoves = learned.locations.filter { $0.t > 1_600 }.count, frozenMoves = frozen.locations.filter { $0.t > 1_600 }.count
        #expect(frozenMoves > learnedMoves + 2, "\(frozenMoves) moves frozen, \(learnedMoves) learned")
    }
}

/// The same readings at another time give the same history: nothing the engine learns may depend
/// on the clock's absolute value (a second run of the fault suite starts at another time).
@Suite struct TimeShiftTests {
    func run(startingAt start: Double) throws -> Driver {
        var rng = SeededRandom(seed: 11)
        var d = Driver(try Venue.line(4, spacing: 8, radius: 3))
        d.now = start
        d.run(for: 1500) { d in
            d.heartbeat()
            // Walks r0 → r3 and back every 200 s, 0.2 m/s, with 4 dB of noise; g3 misses half the seconds.
            let phase = (d.now - start).truncatingRemainder(dividingBy: 200)
            let x = phase < 100 ? phase * 0.24 : (200 - phase) * 0.24
            for g in 0..<4 where g != 3 || Double.random(in: 0..<1, using: &rng) < 0.5 {
                d.hear("g\(g)", rssi: rssi(atDistance: max(0.5, abs(Double(g) * 8 - x))) + rng.gaussian(sigma: 4))
            }
        }
        return d
    }

    @Test func shiftingEveryTimeShiftsTheHistoryAndChangesNothingElse() throws {
        let shift = 86_400.0 * 400 + 12_345
        let a = try run(startingAt: 1_000), b = try run(startingAt: 1_000 + shift)
        // The reception model was well fed (so its sampling of seconds was in use) and is the same.
        #expect(a.engine.calibration.reception.isWellFed)
        #expect(a.engine.calibration.reception == b.engine.calibration.reception)
        #expect(a.engine.calibration.powerCorrectionDB == b.engine.calibration.powerCorrectionDB)
        let la = a.locations.map { "\($0.t - 1_000) \($0.region ?? "-")" }
        let lb = b.locations.map { "\($0.t - 1_000 - shift) \($0.region ?? "-")" }
        #expect(la.count > 10)
        #expect(la == lb)
    }
}

/// A venue whose receivers and tags read far above the configured measured power still calibrates.
@Suite struct VenueLevelTests {
    /// The three gateways of `Venue.line(3)` (10 m apart) hear a device at `x` metres, every
    /// reading `shift` dB off the default model, with Gaussian noise.
    static func hearOnLine(_ d: inout Driver, at x: Double, shift: Double, sigma: Double, _ rng: inout SeededRandom) {
        for g in 0..<3 {
            d.hear("g\(g)", rssi: min(-1, rssi(atDistance: max(0.5, abs(Double(g) * 10 - x))) + shift + rng.gaussian(sigma: sigma)))
        }
    }

    @Test(arguments: UInt64(1)...4)
    func beforeTheVenuesLevelIsKnownItDoesNotPullDevicesToTheMiddle(seed: UInt64) throws {
        // The first minute of a venue whose receivers read 20 dB above the configured measured
        // power: a 3 × 3 grid of regions 4 m apart, one device standing in the corner region, each
        // gateway hearing it in 30 % of half-seconds. Until the level is learned, every region
        // needs a large common offset `b`; held to the device spread (6 dB) as if the level were
        // known, the smallest `b` (the region nearest to every gateway: the middle) won the
        // seconds with few readings, and seeds 2 and 4 recorded the device in the middle first.
        var rng = SeededRandom(seed: seed)
        let spacing = 4.0
        var d = Driver(try Venue.grid(cols: 3, rows: 3, spacing: spacing, radius: spacing / 2))
        let start = d.now
        d.run(for: 60, step: 0.5) { d in
            d.heartbeat()
            for x in 0..<3 {
                for y in 0..<3 where Double.random(in: 0..<1, using: &rng) < 0.3 {
                    let dx = Double(x) * spacing - 0.5, dy = Double(y) * spacing - 0.5
                    d.hear("g\(x)_\(y)", rssi: min(-1, rssi(atDistance: (dx * dx + dy * dy).squareRoot()) + 20 + rng.gaussian(sigma: 3)))
                }
            }
        }
        #expect(d.locations.compactMap(\.region) == ["r0_0"], "\(d.locations.map { (Int($0.t - start), $0.region ?? "-") })")
    }

    @Test func theLevelsUncertaintyNarrowsAsItIsLearnedAndASiteFileCanGiveIt() throws {
        let site = try Venue.line(2)
        let prior = FusionContext(site: site).levelPriorVariance
        #expect(prior == VenueCalibration.levelPriorSD * VenueCalibration.levelPriorSD)
        var c = VenueCalibration(site: site)
        #expect(c.levelVariance(prior: prior) == Float(prior))
        let wide = EvidenceModel.levelPrior(venueLevelVariance: c.levelVariance(prior: prior))
        // Before any confident second a reading gives a device a set when it is within a radius
        // 30 dB (two standard deviations) further out: 10^(30 / 20) = 31.6 times it at exponent 2.
        #expect(abs(c.reach(prior: prior) - 31.62) < 0.01, "\(c.reach(prior: prior))")
        c.updates = 49
        #expect(c.levelVariance(prior: prior) > 0 && c.levelVariance(prior: prior) < 2, "\(c.levelVariance(prior: prior))")
        #expect(c.reach(prior: prior) > 1 && c.reach(prior: prior) < 1.5)
        let narrow = EvidenceModel.levelPrior(venueLevelVariance: c.levelVariance(prior: prior))
        // A wider prior shrinks `b` less and penalises it less.
        #expect(wide.count < narrow.count && wide.scale < narrow.scale)
        // Known once `levelWarmup` confident seconds have taught it: radii as the site gives them.
        c.updates = VenueCalibration.levelWarmup
        #expect(c.reach(prior: prior) == 1)
        // A measured `measured_power_offset_db` (what `waymark site calibrate --write` writes): known.
        let measured = try SiteLoader.parse(yaml: """
            site: test
            gateways:
              - { id: g0, position: [0, 0] }
            regions:
              - { id: r0, gateways: [g0], radius_m: 3 }
            calibration:
              measured_power_offset_db: 12
            """).site
        let known = FusionContext(site: measured).levelPriorVariance
        #expect(known == 0)
        #expect(VenueCalibration(site: measured).levelVariance(prior: known) == 0)
        #expect(VenueCalibration(site: measured).reach(prior: known) == 1)
        #expect(VenueCalibration(site: measured).powerCorrectionDB == 12)
    }

    @Test func aVenueReadingFarBelowTheConfiguredLevelIsStillTracked() throws {
        // Receivers and tags reading 15 dB below the configured measured power: a device standing
        // 1 m from a gateway reads as 5.6 m away, beyond every region's 3-m radius. Held to the
        // radius as drawn, no reading gave the device a monitored set, so no second was tracked or
        // taught the level, and nothing was ever recorded. Now the set comes from a reading within
        // the level's uncertainty (`VenueCalibration.reach`), its seconds teach the level, and the
        // device enters r0 once its readings put it within the drawn radius.
        var rng = SeededRandom(seed: 5)
        var d = Driver(try Venue.line(3, spacing: 10, radius: 3))
        let start = d.now
        d.run(for: 240) { d in
            d.heartbeat()
            // Stands by g0 for two minutes, then walks to g2 at 0.6 m/s and stands there.
            let x = min(19, 1 + max(0, d.now - start - 120) * 0.6)
            Self.hearOnLine(&d, at: x, shift: -15, sigma: 2, &rng)
        }
        #expect(d.locations.compactMap(\.region) == ["r0", "r1", "r2"], "\(d.locations.map { (Int($0.t - start), $0.region ?? "-") })")
        // The level was learned: 15 dB low, less the 7.4 dB by which a device 1 m from the gateway
        // is nearer than the region's typical point (2.35 m) the model expects it at.
        let correction = d.engine.calibration.powerCorrectionDB
        #expect(correction < -5, "learned \(correction) dB")
        // Once the level is learned, the regions hold their drawn radii again: the device by g2 is
        // inside r2 only.
        #expect(d.states("r0").last?.state == .outside && d.states("r2").last?.state == .inside)
    }

    @Test func aVenueReading25dBHotterThanConfiguredIsLearned() throws {
        var rng = SeededRandom(seed: 3)
        var d = Driver(try Venue.line(3, spacing: 10, radius: 3))
        let start = d.now
        // Walks r0 → r2 and back every 240 s; every reading 25 dB above the default model's.
        d.run(for: 1200) { d in
            d.heartbeat()
            let phase = (d.now - start).truncatingRemainder(dividingBy: 240)
            let x = phase < 120 ? phase / 6 : (240 - phase) / 6
            Self.hearOnLine(&d, at: x, shift: 25, sigma: 3, &rng)
        }
        let correction = d.engine.calibration.powerCorrectionDB
        #expect(correction > 20 && correction <= 30, "learned \(correction) dB")
        // Late in the run the device's recorded path still follows it along the line.
        let late = d.locations.filter { $0.t > start + 720 }.compactMap(\.region)
        #expect(late.contains("r0") && late.contains("r1") && late.contains("r2"), "\(late)")
    }
}
