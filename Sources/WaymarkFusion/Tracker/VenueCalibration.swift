import WaymarkCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the engine has learned about the venue's radio from the readings themselves
/// (self-calibration, docs/fusion.md "Self-calibration"): bounded, slowly adapting estimates of
///
/// - the **measured-power correction**: dB added to every device's measured power (advertised or
///   `default_measured_power_dbm`), so that a venue whose receivers all read hotter or colder than
///   the tags' calibration still gets right distances;
/// - the **path-loss exponent** n and the **room loss** W (dB lost to a gateway outside the
///   device's room), from a regression of each second's readings on the model, centred within the
///   second so that the device's own level drops out, with a Gaussian prior (n: the site's
///   `path_loss_exponent` ± 0.5, W: 5 ± 3 dB);
/// - the **reception curve**: how often a gateway reports a device in a second, by the reading the
///   model expects there (`ReceptionCalibration`), which decides what a silent gateway says;
/// - **per-gateway offsets**: each gateway's mean deviation from the model, fitted jointly with
///   each second's level (`learnOffsets`) and relative to the median gateway. Only the part beyond
///   ±`offsetDeadZoneDB` is applied: a few dB of deviation is as
///   likely to be where the gateway hangs (a wall, a corner) as its hardware, and correcting it
///   made room-level accuracy worse on real data; a gateway that reads 8 dB hot is corrected by 5.
///
/// Only seconds in which the tracker is at least `minConfidence` sure of the region teach the
/// exponent and room loss; every second teaches the level (weighed by how sure it is,
/// `learnLevel`) and the offsets (averaged over the tracker's belief, `learnOffsets`); a walk
/// test's stays teach everything (`CalibrationTeacher`).
/// Saved with the engine's checkpoint; shown in the aggregator's metrics; `waymark site calibrate`
/// prints it with its uncertainty and can write it into the site file.
public struct VenueCalibration: Hashable, Sendable, Codable {
    public internal(set) var powerCorrectionDB: Double = 0
    public internal(set) var pathLossExponent: Double
    public internal(set) var roomLossDB: Double
    /// Offsets learned per gateway (dB, before the dead zone; relative to the median gateway's).
    public internal(set) var gatewayOffsetDB: [Double]
    /// Confident seconds' worth that taught the exponent and room loss (a long stay's seconds count
    /// less: `stayWeight`).
    public internal(set) var updates: Double = 0
    /// How often each gateway reports a device, by expected RSSI (`ReceptionCalibration`). Saved
    /// beside this in `CalibrationCheckpoint` (so that checkpoints written before it existed still
    /// restore), not inside it.
    var reception = ReceptionCalibration(gatewayCount: 0)
    /// Since this engine started: the device-seconds the tracker offered the calibration, and what
    /// they counted for (`stayWeight`: less for a device that had stayed at one place). Far fewer
    /// worth than seen: the data were mostly tags standing still, which say where they stand rather
    /// than how the gateways read (`waymark site calibrate` says so).
    public internal(set) var taught = TeachingTally()

    /// A tally of one run, not part of what was learned: not saved with a checkpoint, and not
    /// compared (a calibration restored from a checkpoint equals the one saved).
    public struct TeachingTally: Sendable, Hashable {
        public internal(set) var seconds = 0.0, worth = 0.0
        public static func == (_: Self, _: Self) -> Bool { true }
        public func hash(into hasher: inout Hasher) {}
    }

    private enum CodingKeys: String, CodingKey {
        case powerCorrectionDB, pathLossExponent, roomLossDB, gatewayOffsetDB, updates, powerMean, powerSquare
        case sxx, sxz, szz, sxy, szy, offsetSum, offsetSquare, offsetCount, applied, exponentPrior, roomLossPrior, levelTerms, levelSeconds
    }

    /// `levelTerms`' running means.
    struct LevelTerms: Hashable, Sendable, Codable {
        var y: Double, x: Double, z: Double
    }

    // Sufficient statistics (decayed).
    var powerMean = 0.0, powerSquare = 0.0
    /// The venue's level, kept apart from the exponent and room loss it was measured with: the
    /// running means (over the last ~`powerMemory` seconds' worth, `levelSeconds`) of each second's mean
    /// reading above the device's measured power (`y`, with the learned gateway corrections), its
    /// mean −10·log₁₀ distance (`x`) and its share of gateways behind a wall (`z`). The correction
    /// is `y − n·x + W·z` at the exponent n and room loss W learned *now*. Accumulated as the
    /// level the second's own exponent gave (as before 2026-12-06), the first seconds fixed it at
    /// the prior exponent (2.0): on a real office floor whose exponent is 1.6–1.7 that put the
    /// level 3–8 dB high, and it stayed high for the rest of a 9-minute recording (docs/accuracy.md,
    /// "A venue never seen"). nil in checkpoints saved before it was kept.
    var levelTerms: LevelTerms?
    /// Seconds of evidence behind the level (`learnLevel`): each device-second counts by how much
    /// it says about the venue's level, 1 for a second whose region is certain, less as the
    /// tracker's belief spreads over regions that would put the device at different distances.
    /// nil in checkpoints saved before it was kept (then `updates`, the confident seconds, which
    /// were all that taught the level).
    var levelSeconds: Double?
    /// `levelSeconds`, or for an older checkpoint the confident seconds that taught its level.
    public var levelEvidence: Double { levelSeconds ?? updates }
    var sxx = 0.0, sxz = 0.0, szz = 0.0, sxy = 0.0, szy = 0.0
    var offsetSum: [Double], offsetSquare: [Double], offsetCount: [Double]
    /// The corrections added to each gateway's readings now (minus its deviation beyond the dead
    /// zone, relative to the median gateway's).
    var applied: [Float]
    /// The priors: the site's path-loss exponent and room loss (its `calibration:` section, else
    /// `fusion.path_loss_exponent` and 5 dB).
    let exponentPrior: Double
    let roomLossPrior: Double

    static let minConfidence: Float = 0.9
    static let defaultRoomLossDB = 5.0, roomLossPriorSD = 3.0, exponentPriorSD = 0.5
    static let exponentRange = 1.6...3.5, roomLossRange = 0.0...10.0
    public static let offsetDeadZoneDB = 3.0
    static let offsetLimitDB = 15.0, powerLimitDB = 30.0
    /// Seconds' worth of level evidence (`levelSeconds`) before the venue's level counts as known
    /// (`levelGateDB`, `reach`).
    static let levelWarmup = 50.0
    /// Seconds of evidence after the engine's first reading before a venue that has not learned
    /// its level lets devices get a monitored set from further out than a region's radius
    /// (`reach`). A device within a region is placed with confidence within a few seconds (the
    /// smoothing lag and a little more), so a busy venue whose level is as configured never gets
    /// there: only one whose readings put nobody within any radius does.
    static let stalledAfterS = 10.0

    /// How far a second's fitted device level may lie from the venue's and still teach it. Two
    /// device spreads once the venue's level is known; before that, anything within the power
    /// limit: a venue whose receivers and tags read 25 dB above the configured measured power
    /// (common: the default is −59 dBm at 1 m and receivers differ) would otherwise never teach
    /// the correction that brings its devices within the gate.
    var levelGateDB: Float {
        levelEvidence < Self.levelWarmup ? Float(Self.powerLimitDB) : 2 * EvidenceModel.deviceSpreadDB
    }
    /// How far the venue's level (the configured measured power plus `powerCorrectionDB`) may be
    /// from the truth before any second has taught it (dB, one standard deviation):
    /// receivers and tags of another make read 10–25 dB away from the default −59 dBm at 1 m, and
    /// the correction is bounded at ±`powerLimitDB`, two of these. A site file whose `calibration:`
    /// section gives `measured_power_offset_db` (written by `waymark site calibrate`) starts known
    /// (`FusionContext.levelPriorVariance`).
    public static let levelPriorSD = 15.0

    /// The venue level's remaining uncertainty (variance, dB²): its prior (`prior`, dB²), narrowed
    /// by each second's fitted device level (spread `EvidenceModel.deviceSpreadDB`; each second
    /// counted by its weight in `levelSeconds`, and consecutive seconds count
    /// `EvidenceModel.evidenceWeight` of independent ones). It widens the
    /// prior on each hypothesis' common offset `b` (`EvidenceModel.levelPrior`): until the venue's
    /// level is known, an offset of 17 dB is no evidence against a region, and the level may not
    /// decide.
    func levelVariance(prior: Double) -> Float {
        guard prior > 0 else { return 0 }
        let spread = Double(EvidenceModel.deviceSpreadDB * EvidenceModel.deviceSpreadDB)
        return Float(1 / (1 / prior + Double(EvidenceModel.evidenceWeight) * levelEvidence / spread))
    }

    /// How much farther than a region's radius a reading may put a device that is in no region and
    /// still give it a monitored set around that region, in a venue whose level is not known yet
    /// (`levelWarmup` seconds' worth) and whose first `stalledAfterS` seconds of evidence have
    /// not taught it (`FusionContext.reach`): as far as the reading would put it with the level
    /// two standard deviations higher. Only the set: Core Location's `inside` keeps the drawn
    /// radius, and the device enters a region once a reading is within it. Without it, a venue
    /// reading 13 dB or more below the configured measured power had no reading within any radius,
    /// so no device got a set, no second was tracked or confident, the level was never learned
    /// and nothing was ever recorded (the Kolakowski robot run read 30 dB lower: 0 % exact;
    /// docs/accuracy.md). 1 once the level is known.
    @inline(__always)
    func reach(prior: Double) -> Double {
        guard prior > 0, levelEvidence < Self.levelWarmup else { return 1 }
        let allowance = 2 * Double(levelVariance(prior: prior)).squareRoot()
        return pow10(allowance / (10 * pathLossExponent))
    }

    /// Readings the regression remembers (older ones decay away).
    static let regressionMemory = 20_000.0
    /// Seconds' worth the power correction averages over, and readings each offset averages over,
    /// once warmed up.
    static let powerMemory = 50.0, offsetMemory = 500.0

    /// How long a stay teaches the venue at full weight (s), and the time constant with which it
    /// then stops (`stayWeight`).
    public static let stayTeachingS = 60.0

    /// What a second of a device that has been at one place (its recorded region, or none) for
    /// `dwell` seconds teaches the calibration, against a second of a device on the move: 1 for
    /// the first `stayTeachingS`, then falling by e every `stayTeachingS`, so that one stay teaches
    /// at most two minutes' worth however long it lasts.
    ///
    /// The calibration learns what is the same at every place (the venue's level, the gateways'
    /// offsets, the exponent and room loss); a device that does not move gives the same place's
    /// shadowing second after second (in the fitted radio it changes over 2.3 m walked, but only
    /// over about 200 s standing), and taken at face value one parked tag outweighs every walker:
    /// a tag left for an hour in the hall of the Kolakowski flat, next to its kitchen, taught the
    /// flat an exponent of 2.66 and 0.7 dB of walls (1.60 and 7.5 without it), and the robot run
    /// that followed fell from 92.1 to 80.1 % exact; 90.6 % with this weight (docs/accuracy.md, "A
    /// parked tag teaches one place"). A stay longer than a minute is, most probably, a device
    /// standing still.
    public static func stayWeight(dwell: Double) -> Double {
        dwell <= stayTeachingS ? 1 : exp(-(dwell - stayTeachingS) / stayTeachingS)
    }

    init(gatewayCount: Int, pathLossExponent: Double, roomLossDB: Double = Self.defaultRoomLossDB, powerCorrectionDB: Double = 0) {
        self.pathLossExponent = pathLossExponent
        exponentPrior = pathLossExponent
        self.roomLossDB = roomLossDB
        roomLossPrior = roomLossDB
        self.powerCorrectionDB = powerCorrectionDB
        gatewayOffsetDB = Array(repeating: 0, count: gatewayCount)
        offsetSum = gatewayOffsetDB
        offsetSquare = gatewayOffsetDB
        offsetCount = gatewayOffsetDB
        applied = Array(repeating: 0, count: gatewayCount)
        reception = ReceptionCalibration(gatewayCount: gatewayCount)
    }


    /// One confident second: the region's readings (gateway, RSSI after the site's offset), the
    /// common offset `b` the tracker fitted for that region, and the device's measured power
    /// (before this correction). It teaches the exponent and room loss. `certain`: the second is
    /// known to be in `r` (a walk test's stay), and teaches the venue's level and the gateways'
    /// offsets too; the tracker teaches those from every second instead, by its belief
    /// (`learnLevel(region:readings:measuredPower:tables:weight:)`, `learnOffsets`). `weight`: what
    /// the second counts for in the exponent and room loss (`stayWeight`; 1 in a walk test).
    mutating func learn(region r: Int, readings: [RegionTracker.Heard], b: Float, measuredPower: Double,
                        tables: TrackerTables, certain: Bool = true, weight: Double = 1) {
        guard weight > 0 else { return }
        updates += weight
        let rate = weight * max(1 / Self.powerMemory, 1 / updates)
        let shift = Double(b)
        powerMean += rate * (shift - powerMean)
        powerSquare += rate * (shift * shift - powerSquare)

        if certain { learnLevel(region: r, readings: readings, measuredPower: measuredPower, tables: tables) }
        guard readings.count >= 2 else { return }
        forgetShape(readings: Double(readings.count) * weight)
        learnShape(region: r, readings: readings, tables: tables, weight: weight)
        if certain {
            learnOffsets(readings: readings, measuredPower: measuredPower, tables: tables, hypotheses: 1,
                         region: { _ in r }, probability: { _ in 1 })
        }
    }

    /// What one second teaches the gateways' offsets: each reading's deviation from the model,
    /// averaged over the regions the device may be in (`hypotheses` of them: `region(i)` with
    /// probability `probability(i)`, which need not sum to 1), `weight` readings' worth per gateway
    /// (1, or less for a device that has stayed at one place: `stayWeight`).
    ///
    /// In each region the gateways' offsets are fitted jointly with the second's level (alternating
    /// least squares, one step a second): the level a gateway is measured against is the mean of
    /// the second's readings with every gateway's current offset estimate taken out. Measured
    /// against the level `b` fitted from the readings as the tracker used them (offsets within the
    /// dead zone not taken out), a gateway reading 8 dB hot raised its own yardstick by its share
    /// of the second's readings and lowered the other gateways' by as much: on a simulated
    /// Kolakowski flat a gateway shifted by ±8 dB was learned at 0.73 of its shift, then 0.88
    /// (`tools/robustness/offsets.py`).
    ///
    /// Averaged over the tracker's belief in every second, not read in the region of the seconds
    /// it is sure of: those are mostly seconds near a gateway, a selection that read the receivers
    /// of a real office floor up to 3.5 dB wrong after 2.5 minutes (docs/accuracy.md, "Offsets
    /// from every second").
    mutating func learnOffsets(readings: [RegionTracker.Heard], measuredPower: Double, tables: TrackerTables,
                               hypotheses: Int, weight: Double = 1, region: (Int) -> Int, probability: (Int) -> Double) {
        let h = readings.count
        guard h >= 2, weight > 0 else { return }
        let G = tables.gatewayCount, base = measuredPower + powerCorrectionDB
        withUnsafeTemporaryAllocation(of: Double.self, capacity: h) { residual in
            residual.update(repeating: 0)
            var mass = 0.0
            for i in 0..<hypotheses {
                let p = probability(i)
                guard p > 0 else { continue }
                let row = region(i) * G
                var levelSum = 0.0
                for reading in readings {
                    let g = Int(reading.gateway)
                    levelSum += Double(reading.sum / reading.count) - base - pathLossExponent * Double(tables.logDistance[row + g])
                        + roomLossDB * Double(tables.otherRoom[row + g]) - currentOffset(g)
                }
                let level = base + levelSum / Double(h)
                for (j, reading) in readings.enumerated() {
                    let g = Int(reading.gateway)
                    // The gateway's deviation from the model, without any learned offset.
                    let expected = level + pathLossExponent * Double(tables.logDistance[row + g])
                        - roomLossDB * Double(tables.otherRoom[row + g])
                    residual[j] += p * (Double(reading.sum / reading.count) - expected)
                }
                mass += p
            }
            guard mass > 0 else { return }
            for (j, reading) in readings.enumerated() {
                let g = Int(reading.gateway), deviation = residual[j] / mass
                offsetCount[g] += weight
                let w = weight * max(1 / Self.offsetMemory, 1 / offsetCount[g])
                offsetSum[g] += w * (deviation - offsetSum[g])
                offsetSquare[g] += w * (deviation * deviation - offsetSquare[g])
            }
        }
    }

    /// The regression's memory: a second of `readings` readings makes the older ones count less.
    mutating func forgetShape(readings k: Double) {
        let decay = max(0, 1 - k / Self.regressionMemory)
        sxx *= decay; sxz *= decay; szz *= decay; sxy *= decay; szy *= decay
    }

    /// A confident second's part of the exponent and room-loss regression, for region `r`: each
    /// reading's deviation from the second's mean against its log-distance's and wall share's, so
    /// that the device's own level drops out. Only confident seconds teach it: learned from every
    /// second by the tracker's belief, as the level is, the exponent went to its lower bound on
    /// short walks and the recorded route of the Kolakowski walk went from 100 to 87.9 %
    /// (docs/accuracy.md, 2026-12-07).
    mutating func learnShape(region r: Int, readings: [RegionTracker.Heard], tables: TrackerTables, weight: Double = 1) {
        let G = tables.gatewayCount
        var mx = 0.0, mz = 0.0, my = 0.0
        for h in readings {
            let g = Int(h.gateway)
            mx += Double(tables.logDistance[r * G + g])
            mz -= Double(tables.otherRoom[r * G + g])
            my += Double(h.sum / h.count)
        }
        let k = Double(readings.count)
        mx /= k; mz /= k; my /= k
        for h in readings {
            let g = Int(h.gateway)
            let x = Double(tables.logDistance[r * G + g]) - mx
            let z = -Double(tables.otherRoom[r * G + g]) - mz
            let y = Double(h.sum / h.count) - my
            sxx += weight * x * x; sxz += weight * x * z; szz += weight * z * z; sxy += weight * x * y; szy += weight * z * y
        }
    }

    /// The venue's level from one second read in region `r` (`levelTerms`): the second's mean
    /// reading above the device's measured power (with the learned gateway corrections), and the
    /// mean log-distance and wall share of its readings from `r`, counted `weight` of a certain
    /// second (`levelSeconds`; 1: a walk test's stay, less for the tracker's most probable region).
    /// Running means over the last `powerMemory` seconds' worth; the correction is read from them
    /// at the current exponent and room loss.
    mutating func learnLevel(region r: Int, readings: [RegionTracker.Heard], measuredPower: Double, tables: TrackerTables,
                             weight: Double = 1) {
        guard !readings.isEmpty, weight > 0 else { return }
        let G = tables.gatewayCount
        var x = 0.0, y = 0.0, z = 0.0
        for h in readings {
            let g = Int(h.gateway)
            x += Double(tables.logDistance[r * G + g])
            y += Double(h.sum / h.count + appliedOffset(g)) - measuredPower
            z += Double(tables.otherRoom[r * G + g])
        }
        let k = Double(readings.count)
        x /= k; y /= k; z /= k
        let seconds = levelEvidence + weight
        levelSeconds = seconds
        let rate = weight / min(seconds, Self.powerMemory)
        // A checkpoint saved before the terms were kept: start them where its correction was.
        var terms = levelTerms ?? LevelTerms(y: powerCorrectionDB + pathLossExponent * x - roomLossDB * z, x: x, z: z)
        terms.y += rate * (y - terms.y)
        terms.x += rate * (x - terms.x)
        terms.z += rate * (z - terms.z)
        levelTerms = terms
        updateLevel()
    }

    /// The measured-power correction the level terms give at the current exponent and room loss.
    mutating func updateLevel() {
        guard let t = levelTerms else { return }
        powerCorrectionDB = min(max(t.y - pathLossExponent * t.x + roomLossDB * t.z, -Self.powerLimitDB), Self.powerLimitDB)
    }

    /// Solves the regression and recomputes the applied offsets (the engine calls it about once a
    /// second of evidence).
    mutating func refresh() {
        reception.refresh()
        let s2 = Double(EvidenceModel.sigmaDB * EvidenceModel.sigmaDB)
        let pn = s2 / (Self.exponentPriorSD * Self.exponentPriorSD), pw = s2 / (Self.roomLossPriorSD * Self.roomLossPriorSD)
        let a = sxx + pn, b = sxz, c = szz + pw
        let u = sxy + pn * exponentPrior, v = szy + pw * roomLossPrior
        let det = a * c - b * b
        if det > 0 {
            (pathLossExponent, roomLossDB) = Self.boundedFit(a: a, b: b, c: c, u: u, v: v, det: det)
            updateLevel()
        }
        // Relative to the median gateway: the venue's common level is the power correction's, and
        // one gateway far off must not move every other gateway's offset (the mean of six moved
        // by a sixth of a hot one's).
        let known = offsetSum.indices.filter { offsetCount[$0] >= Self.offsetMinReadings }.map { offsetSum[$0] }.sorted()
        let reference = known.isEmpty ? 0 : (known[(known.count - 1) / 2] + known[known.count / 2]) / 2
        for g in offsetSum.indices {
            guard offsetCount[g] >= Self.offsetMinReadings else { gatewayOffsetDB[g] = 0; applied[g] = 0; continue }
            let o = min(max(offsetSum[g] - reference, -Self.offsetLimitDB), Self.offsetLimitDB)
            gatewayOffsetDB[g] = o
            // The correction added to its readings: a gateway reading hot is turned down.
            let beyond = max(0, abs(o) - Self.offsetDeadZoneDB)
            applied[g] = Float(o < 0 ? beyond : -beyond)
        }
    }

    /// The least-squares exponent and room loss within their ranges, from the normal equations
    /// [a b; b c]·(n, W) = (u, v) (a positive-definite system: the priors make it one): the free
    /// solution when it lies within both ranges, else the best point on the ranges' boundary —
    /// each of the four edges with the other value fitted given the bound and kept in its range.
    /// Clamping each of the free values separately (as before) left the room loss fitted for an
    /// exponent it does not have: where the readings fall off more slowly than the exponent's
    /// lower bound allows, the room loss took up the difference (4.7 dB of walls learned in a
    /// simulated open hall without any, 2.1 dB now; docs/accuracy.md).
    static func boundedFit(a: Double, b: Double, c: Double, u: Double, v: Double, det: Double) -> (n: Double, w: Double) {
        let ns = exponentRange, ws = roomLossRange
        let n = (c * u - b * v) / det, w = (a * v - b * u) / det
        if ns.contains(n) && ws.contains(w) { return (n, w) }
        func clamp(_ x: Double, _ r: ClosedRange<Double>) -> Double { min(max(x, r.lowerBound), r.upperBound) }
        // Twice the quadratic form's value, up to a constant: what the least-squares fit minimises.
        func cost(_ n: Double, _ w: Double) -> Double { a * n * n + 2 * b * n * w + c * w * w - 2 * (u * n + v * w) }
        var candidates: [(n: Double, w: Double)] = []
        for nb in [ns.lowerBound, ns.upperBound] { candidates.append((nb, clamp((v - b * nb) / c, ws))) }
        for wb in [ws.lowerBound, ws.upperBound] { candidates.append((clamp((u - b * wb) / a, ns), wb)) }
        return candidates.min { cost($0.n, $0.w) < cost($1.n, $1.w) }!
    }

    /// Readings a gateway's offset needs before it counts (and is applied).
    public static let offsetMinReadings = 50.0

    /// The gateway's learned offset (before the dead zone), 0 while it has too few readings.
    @inline(__always)
    func currentOffset(_ g: Int) -> Double { offsetCount[g] >= Self.offsetMinReadings ? gatewayOffsetDB[g] : 0 }

    /// The correction (dB) the engine adds to gateway `g`'s readings on top of its site offset.
    @inline(__always)
    func appliedOffset(_ g: Int) -> Float { g < applied.count ? applied[g] : 0 }

    /// The corrections applied now, by gateway index (for `waymark site calibrate --write`).
    public var appliedCorrectionsDB: [Double] { applied.map(Double.init) }

    /// Standard errors of the estimates (dB, or unitless for the exponent), for `site calibrate`.
    /// Consecutive seconds are correlated: only `EvidenceModel.evidenceWeight` of them count as
    /// independent, which widens each error by 1/√0.4.
    public var uncertainty: (powerDB: Double, exponent: Double, roomLossDB: Double, gatewayDB: [Double]) {
        let raw = rawUncertainty
        let k = (1 / Double(EvidenceModel.evidenceWeight)).squareRoot()
        return (raw.powerDB * k, raw.exponent * k, raw.roomLossDB * k, raw.gatewayDB.map { $0 * k })
    }

    var rawUncertainty: (powerDB: Double, exponent: Double, roomLossDB: Double, gatewayDB: [Double]) {
        let s2 = Double(EvidenceModel.sigmaDB * EvidenceModel.sigmaDB)
        let pn = s2 / (Self.exponentPriorSD * Self.exponentPriorSD), pw = s2 / (Self.roomLossPriorSD * Self.roomLossPriorSD)
        let a = sxx + pn, b = sxz, c = szz + pw, det = a * c - b * b
        let powerSD = (max(0, powerSquare - powerMean * powerMean) / max(1, min(updates, Self.powerMemory))).squareRoot()
        let gw = offsetSum.indices.map { g in
            offsetCount[g] > 1
                ? (max(0, offsetSquare[g] - offsetSum[g] * offsetSum[g]) / min(offsetCount[g], Self.offsetMemory)).squareRoot()
                : Double.infinity
        }
        return (powerSD, det > 0 ? (s2 * c / det).squareRoot() : .infinity, det > 0 ? (s2 * a / det).squareRoot() : .infinity, gw)
    }

    /// The learned sensitivity: the share of the reports of a fully reliable gateway that arrive
    /// when the model expects `expectedDBm` there (`ReceptionCalibration`; 1 for strong signals).
    public func receptionSensitivity(atExpectedDBm expectedDBm: Double) -> Double {
        Double(ReceptionCalibration.interpolate(reception.sensitivity, at: Float(expectedDBm)))
    }

    /// The learned reliability of each gateway (by index): the share of a device's seconds it
    /// reports when the signal is strong, in seconds in which another gateway did.
    public var gatewayReliability: [Double] { reception.reliability.map(Double.init) }

    /// Gateway-seconds behind the reception model (decayed), in all and per gateway.
    public var receptionOpportunities: Double { reception.totalOpportunities }
    public func receptionOpportunities(gateway g: Int) -> Double { reception.opportunities(gateway: g) }

    /// The median gateway reliability and the least reliable gateway's index and reliability,
    /// among gateways with at least 200 opportunities (nil: none has).
    public var reliabilitySpread: (median: Double, lowest: (gateway: Int, reliability: Double))? {
        let known = gatewayReliability.indices.filter { receptionOpportunities(gateway: $0) >= 200 }
        guard let low = known.min(by: { gatewayReliability[$0] < gatewayReliability[$1] }) else { return nil }
        let sorted = known.map { gatewayReliability[$0] }.sorted()
        return (sorted[sorted.count / 2], (low, gatewayReliability[low]))
    }

    /// The sensitivity at a few expected readings, for summaries: "−90 dBm 35 %, …".
    public var receptionSummary: String {
        [-95.0, -90.0, -85.0, -80.0, -70.0].map { "\(Int($0)) dBm \(Int((receptionSensitivity(atExpectedDBm: $0) * 100).rounded())) %" }
            .joined(separator: ", ")
    }

    /// Readings behind each gateway's offset.
    public var gatewayReadings: [Double] { offsetCount }
}

extension VenueCalibration {
    /// The starting point for `site`: its `calibration:` section, else the `fusion:` defaults.
    init(site: Site) {
        self.init(gatewayCount: site.gateways.count,
                  pathLossExponent: site.calibration.pathLossExponent ?? site.fusion.pathLossExponent,
                  roomLossDB: site.calibration.roomLossDB ?? Self.defaultRoomLossDB,
                  powerCorrectionDB: site.calibration.measuredPowerOffsetDB)
    }
}

/// The venue calibration as saved in a checkpoint: per-gateway figures keyed by gateway id, so a
/// checkpoint survives edits to the site file (a gateway that is gone is dropped, a new one starts
/// at 0).
public struct CalibrationCheckpoint: Codable, Sendable, Hashable {
    var gateways: [String]
    var calibration: VenueCalibration
    /// The learned reception model (absent from checkpoints written before it existed).
    var reception: ReceptionCalibration?
    /// The engine's first evidence time (`FusionEngine.firstEvidence`; absent before it was kept).
    var firstEvidence: Double?
    /// The site file's `calibration:` section the engine started from (absent before it was kept).
    var siteCalibration: SiteCalibrationStamp?
}

/// The site file's `calibration:` section as saved with a checkpoint: an operator who writes a new
/// one (`waymark site calibrate --write`, a walk test) means the engine to start from it, not to
/// resume what it had learned before (`FusionEngine.restore(calibration:)`).
struct SiteCalibrationStamp: Codable, Sendable, Hashable {
    var measuredPowerOffsetDB: Double?
    var pathLossExponent: Double?
    var roomLossDB: Double?
    var gatewayOffsetsDB: [String: Double]

    init(_ c: SiteCalibration) {
        measuredPowerOffsetDB = c.measuredPowerOffsetGiven ? c.measuredPowerOffsetDB : nil
        pathLossExponent = c.pathLossExponent
        roomLossDB = c.roomLossDB
        gatewayOffsetsDB = c.gatewayOffsetsDB
    }
}

extension FusionEngine {
    /// The venue calibration, for the aggregator's checkpoint.
    public func calibrationCheckpoint() -> CalibrationCheckpoint {
        // The reception model is saved beside the rest, not inside it (its field is not encoded):
        // leave an empty one in the embedded copy, so that a checkpoint equals itself decoded.
        var rest = calibration
        rest.reception = ReceptionCalibration(gatewayCount: 0)
        return CalibrationCheckpoint(gateways: ctx.gatewayIDs, calibration: rest, reception: calibration.reception,
                                     firstEvidence: firstEvidence.isNaN ? nil : firstEvidence,
                                     siteCalibration: SiteCalibrationStamp(site.calibration))
    }

    /// Restores a saved venue calibration (gateways matched by id; the prior path-loss exponent
    /// stays the current site's). When the site file's `calibration:` section is not the one the
    /// checkpoint was learned from (rewritten by `waymark site calibrate --write` since), the
    /// learned values are dropped and the engine starts from the file's, keeping only the learned
    /// reception (how often each gateway reports): returns false then, true when it resumed.
    @discardableResult
    public mutating func restore(calibration saved: CalibrationCheckpoint) -> Bool {
        var c = VenueCalibration(site: site)
        let s = saved.calibration
        let resumes = saved.siteCalibration.map { $0 == SiteCalibrationStamp(site.calibration) } ?? true
        // The reception model as saved (an older checkpoint has none: the default curve).
        if let reception = saved.reception {
            c.reception = saved.gateways == ctx.gatewayIDs && reception.gatewayCount == ctx.gatewayIDs.count
                ? reception
                : reception.remapped(to: ctx.gatewayIDs.count, saved.gateways.map { site.gatewayIndex($0) })
        }
        if resumes {
            c.powerCorrectionDB = s.powerCorrectionDB
            c.pathLossExponent = s.pathLossExponent
            c.roomLossDB = s.roomLossDB
            c.updates = s.updates
            c.powerMean = s.powerMean; c.powerSquare = s.powerSquare
            c.levelTerms = s.levelTerms
            c.levelSeconds = s.levelSeconds
            c.sxx = s.sxx; c.sxz = s.sxz; c.szz = s.szz; c.sxy = s.sxy; c.szy = s.szy
            for (i, id) in saved.gateways.enumerated() {
                guard let g = site.gatewayIndex(id), i < s.offsetSum.count, i < s.offsetCount.count, i < s.offsetSquare.count else { continue }
                c.offsetSum[g] = s.offsetSum[i]
                c.offsetSquare[g] = s.offsetSquare[i]
                c.offsetCount[g] = s.offsetCount[i]
                if i < s.gatewayOffsetDB.count && i < s.applied.count {
                    c.gatewayOffsetDB[g] = s.gatewayOffsetDB[i]
                    c.applied[g] = s.applied[i]
                }
            }
            // The same venue: resume with exactly the values in use when it was saved (the engine
            // refreshes them about once a second, so refreshing now would change the next readings'
            // distances from what an uninterrupted run computes). Another gateway list or prior:
            // derive them from the restored sums.
            if saved.gateways != ctx.gatewayIDs || s.exponentPrior != c.exponentPrior || s.roomLossPrior != c.roomLossPrior {
                c.refresh()
            }
        }
        calibration = c
        if let first = saved.firstEvidence { firstEvidence = first }
        return resumes
    }
}
