import WaymarkCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The tracker's part of a device (docs/fusion.md): closing a second of evidence, the live region,
/// the smoothed decisions that become the recorded history, and self-calibration.
extension DeviceState {
    /// Closes the open second (if any): its likelihood, a filter step, the live region, what it
    /// teaches the venue calibration, and the smoothed decisions now due.
    mutating func closeSecond(_ ctx: FusionContext, _ health: [GatewayHealth], _ calibration: inout VenueCalibration,
                              into out: inout [FusionOutput]) {
        guard tracker.hasOpenSecond else { return }
        let m = slots.count
        guard m > 0 else {
            tracker.openSecond = .min
            tracker.heard.removeAll(keepingCapacity: true)
            return
        }
        if tracker.stateCount != m { tracker.reset(states: m, on: current >= 0 ? slotIndex(of: current) : nil) }
        let second = tracker.openSecond
        tracker.sortHeard()
        let weight = tracker.heard.reduce(Float(0)) { $0 + $1.count }
        let power = weight > 0 ? tracker.powerSum / Double(weight) : ctx.parameters.defaultMeasuredPowerDBm
        let closedAt = Double(second) + 1
        let model = ctx.tracker.evidence
        let gap = tracker.lastSecond == .min ? nil : Double(second - tracker.lastSecond)
        tracker.reserve(lag: ctx.tracker.lag)
        // The second's vectors (prediction and its staying part, likelihood, each region's fitted
        // offset and fit) live in stack scratch: this runs for every device-second.
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 5 * m) { scratch in
            let prior = UnsafeMutableBufferPointer(rebasing: scratch[0..<m])
            let likelihood = UnsafeMutableBufferPointer(rebasing: scratch[m..<(2 * m)])
            let shifts = UnsafeMutableBufferPointer(rebasing: scratch[(2 * m)..<(3 * m)])
            let fits = UnsafeMutableBufferPointer(rebasing: scratch[(3 * m)..<(4 * m)])
            let staying = UnsafeMutableBufferPointer(rebasing: scratch[(4 * m)..<(5 * m)])
            shifts.update(repeating: 0)
            fits.update(repeating: 0)
            tracker.predict(moves: gap.map { transition(gap: $0, ctx) }, gap: Float(gap ?? 1), into: prior, stay: staying)
            evidence(power: power, at: closedAt, prior: UnsafeBufferPointer(prior), ctx, health, calibration,
                     shifts: shifts, fits: fits, into: likelihood)
            tracker.close(likelihood: UnsafeBufferPointer(likelihood), prior: UnsafeBufferPointer(prior), stay: UnsafeBufferPointer(staying))
            guard ctx.parameters.selfCalibration else { return }
            // The slot whose region the second teaches the calibration, and the one it teaches the
            // reception model: the region the tracker is sure of after the second's readings, and
            // the one it was sure of *before* them (the prediction: judged after them, the seconds
            // in which a near gateway was silent would be the less certain ones and drop out, and
            // every gateway would look more reliable than it is). In a walk test both are the
            // stay's region, whatever the tracker believes (`CalibrationTeacher`).
            let taught: Int?, receptionTaught: Int?
            if let teacher = ctx.teacher {
                taught = teacher.region(of: id, second: second).flatMap { slotIndex(of: $0) }
                receptionTaught = taught
            } else {
                taught = RegionTracker.argmax(tracker.alpha).flatMap { $0.p >= VenueCalibration.minConfidence ? $0.index : nil }
                receptionTaught = RegionTracker.argmax(UnsafeBufferPointer(prior)).flatMap { $0.p >= VenueCalibration.minConfidence ? $0.index : nil }
            }
            // Only a second the model explains well teaches: the device's level is within two
            // spreads of the venue's (once the venue's level is known: `VenueCalibration.levelGateDB`)
            // and the typical reading within two sigmas of the model (not a device heard mostly by
            // gateways far outside its set).
            // A device that has stayed at one place for minutes teaches less and less: it repeats
            // that place (`VenueCalibration.stayWeight`). A walk test's stays are meant to teach.
            let fitGate = model.logDensity(2 * EvidenceModel.sigmaDB), levelGate = calibration.levelGateDB
            let stay = ctx.teacher == nil ? VenueCalibration.stayWeight(dwell: closedAt - placeSince(at: closedAt)) : 1
            if let k = taught, abs(shifts[k]) <= levelGate, fits[k] >= fitGate {
                calibration.learn(region: Int(slots[k].region), readings: tracker.heard, b: shifts[k],
                                  measuredPower: power, tables: ctx.tracker, certain: ctx.teacher != nil, weight: stay)
            }
            if ctx.teacher == nil {
                calibration.taught.seconds += 1
                calibration.taught.worth += stay
                Self.teachFromBelief(heard: tracker.heard, posterior: tracker.alpha, slots: slots, shifts: UnsafeBufferPointer(shifts),
                                fits: UnsafeBufferPointer(fits), fitGate: fitGate, levelGate: levelGate, power: power,
                                weight: stay, ctx.tracker, &calibration)
            }
            // Once every gateway has a few hundred opportunities behind it, one second in four keeps
            // the reception model current at a quarter of the cost, chosen by a hash of its first
            // reading, not of its time: no device's rhythm is left out, and the same readings
            // shifted in time (a replay, a second run) teach the same seconds.
            if gap != nil, let k = receptionTaught, abs(shifts[k]) <= calibration.levelGateDB,
               !calibration.reception.isWellFed || Self.sampled(tracker.heard) {
                let level = Float(power + calibration.powerCorrectionDB) + shifts[k]
                Self.learnReception(links: links, heard: tracker.heard, region: slots[k].region, level: level, at: closedAt,
                                    ctx, health, &calibration)
            }
        }
        tracker.heard.removeAll(keepingCapacity: true)
        publishLive(at: min(closedAt, lastTime), ctx, into: &out)
        while tracker.pendingCount > ctx.tracker.lag { finalizeOldest(at: lastTime, ctx, into: &out) }
        if tracker.pendingCount > 0 { nextDeadline = min(nextDeadline, Double(tracker.lastSecond + 1) + Double(ctx.tracker.lag)) }
    }

    /// The likelihood of the open second's readings for each slot's region, scaled so that the
    /// largest is 1, and each region's fitted common offset `b` (`EvidenceModel`).
    ///
    /// Regions whose predicted probability is below `beam` of the most probable one's are not
    /// evaluated (a pruned, "beam" filter): they get the smallest likelihood of those that were,
    /// so they can only lose ground this second. With a monitored set of 20 in a grid this skips
    /// about half the work; a device that appears far away is re-acquired, not tracked there.
    ///
    /// `mutating` though it changes nothing: called from `closeSecond`'s scratch closure, a
    /// non-mutating method made the compiler copy the whole device state for each call (retaining
    /// every array in it: 4 % of `waymark-bench fusion`'s time, and a third of its `swift_retain`,
    /// in a `perf` profile); as an in-place access the device is lent, not copied.
    mutating func evidence(power: Double, at t: Double, prior: UnsafeBufferPointer<Float>, _ ctx: FusionContext, _ health: [GatewayHealth],
                  _ calibration: VenueCalibration, shifts: UnsafeMutableBufferPointer<Float>, fits: UnsafeMutableBufferPointer<Float>,
                  into logs: UnsafeMutableBufferPointer<Float>) {
        let tables = ctx.tracker, model = tables.evidence, G = tables.gatewayCount
        let n = Float(calibration.pathLossExponent), w = Float(calibration.roomLossDB)
        let level = Float(power + calibration.powerCorrectionDB)
        let levelPrior = EvidenceModel.levelPrior(venueLevelVariance: calibration.levelVariance(prior: ctx.levelPriorVariance))
        let h = tracker.heard.count, m = slots.count
        var best = -Float.infinity, worst = Float.infinity
        // A supervised calibration evaluates every region: the true one needs its fitted level.
        let cutoff = ctx.teacher == nil ? (prior.max() ?? 0) * Self.beam : -Float.infinity
        let reception = calibration.reception.missTable
        let tLimit = Float(model.studentT.count - 1), mLimit = Float(ReceptionCalibration.tableSize - 1)
        let missStep = ReceptionCalibration.tableStep, missSize = ReceptionCalibration.tableSize
        // The inner loops read the tables directly (`EvidenceModel.logDensity`, the learned
        // reception curve's log miss probability) without bounds checks: they run for every region
        // and gateway of every device-second.
        let step = EvidenceModel.step, missFloor = EvidenceModel.missFloor
        let silence = ctx.parameters.gatewaySilenceS
        // Scratch: each heard gateway's RSSI (with its learned correction) and index; each absent
        // gateway's index and the shift from a corrected to a raw reading.
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: links.count + 1) { absentBuffer in
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * h + links.count + 1) { buffer in
            let rssi = buffer.baseAddress!, e = rssi + h, absentShift = e + h
            let absentGateway = absentBuffer.baseAddress!
            for (j, r) in tracker.heard.enumerated() {
                rssi[j] = r.sum / r.count + calibration.appliedOffset(Int(r.gateway))
            }
            // Gateways of the monitored set that are online and did not hear the device this second.
            var absent = 0
            if h > 0 {
                // By index, reading only the gateway: a copied `Link` retains its filter's storage.
                for li in links.indices {
                    let gateway = links[li].gateway
                    if tracker.heard.contains(where: { $0.gateway == gateway }) { continue }
                    let g = Int(gateway)
                    guard health[g].isObservable(at: t, silence: silence) else { continue }
                    absentGateway[absent] = Int32(g)
                    absentShift[absent] = -Float(ctx.gatewayOffset[g]) - calibration.appliedOffset(g)
                    absent += 1
                }
            }
            tracker.heard.withUnsafeBufferPointer { heard in
            tables.logDistance.withUnsafeBufferPointer { ld in
            tables.otherRoom.withUnsafeBufferPointer { other in
            model.studentT.withUnsafeBufferPointer { studentT in
            reception.withUnsafeBufferPointer { missTable in
                for k in 0..<m {
                    guard prior[k] >= cutoff else { logs[k] = .nan; fits[k] = -.infinity; continue }
                    let base = Int(slots[k].region) * G
                    var sum: Float = 0
                    for j in 0..<h {
                        let g = base + Int(heard[j].gateway)
                        let x = rssi[j] - (level + n * ld[g] - w * other[g])
                        e[j] = x
                        sum += x
                    }
                    let b = sum / (Float(h) + levelPrior.count)
                    var fit: Float = 0
                    for j in 0..<h { fit += studentT[Int(min(abs(e[j] - b) * step, tLimit))] }
                    fits[k] = h > 0 ? fit / Float(h) : 0
                    var ll = fit - b * b * levelPrior.scale
                    for a in 0..<absent {
                        let g = base + Int(absentGateway[a])
                        let expected = level + b + n * ld[g] - w * other[g] + absentShift[a]
                        ll += missTable[Int(absentGateway[a]) * missSize + Int(max(0, min((expected - missFloor) * missStep, mLimit)))]
                    }
                    ll *= EvidenceModel.evidenceWeight
                    logs[k] = ll
                    shifts[k] = b
                    best = max(best, ll)
                    worst = min(worst, ll)
                }
            }
            }
            }
            }
            }
        }
        }
        for k in 0..<m { logs[k] = expf((logs[k].isNaN ? worst : logs[k]) - best) }
    }

    /// What one second teaches the venue's level and the gateways' offsets, whatever the tracker's
    /// confidence (docs/fusion.md, "Self-calibration"). Only the regions whose fitted device level
    /// and fit pass the gates count.
    ///
    /// - The level: the level terms of the most probable region, counted by what the second says
    ///   about the level: the probability on the regions that count, times σ²/(σ² + V), σ the device
    ///   spread and V the variance under the belief of the device level each region needs (regions
    ///   at different distances from the gateways that heard it need different levels). A second
    ///   certain of its region counts 1, as the confident seconds that alone taught the level before
    ///   2026-12-07 did; on an open floor with receivers 5 m apart not one second of an 84-s walk
    ///   was certain, and the level stayed unknown. Averaged over the regions instead of read in
    ///   the most probable one, a device heard by one gateway with a fifth of the belief on a region
    ///   10 m away learned the level 4 dB hot and stopped qualifying for its own region's radius.
    /// - The offsets: each reading's deviation averaged over the regions that count, by their
    ///   probability (`VenueCalibration.learnOffsets`; regions under 1 % of the belief skipped).
    /// - Both times `stay`, what a second of a device that has stayed at one place counts for
    ///   (`VenueCalibration.stayWeight`).
    static func teachFromBelief(heard: [RegionTracker.Heard], posterior: [Float], slots: [Slot], shifts: UnsafeBufferPointer<Float>,
                                fits: UnsafeBufferPointer<Float>, fitGate: Float, levelGate: Float, power: Double,
                                weight stay: Double = 1, _ tables: TrackerTables, _ calibration: inout VenueCalibration) {
        guard !heard.isEmpty, posterior.count == slots.count, stay > 0 else { return }
        @inline(__always) func counts(_ k: Int) -> Bool {
            posterior[k] > 0 && fits[k] >= fitGate && abs(shifts[k]) <= levelGate
        }
        var mass = 0.0, b = 0.0, bb = 0.0, top = -1, topP: Float = 0
        for k in slots.indices where counts(k) {
            let p = Double(posterior[k]), shift = Double(shifts[k])
            mass += p
            b += p * shift
            bb += p * shift * shift
            if posterior[k] > topP { top = k; topP = posterior[k] }
        }
        guard mass > 0, top >= 0 else { return }
        b /= mass
        let spread = Double(EvidenceModel.deviceSpreadDB * EvidenceModel.deviceSpreadDB)
        let variance = max(0, bb / mass - b * b)
        calibration.learnLevel(region: Int(slots[top].region), readings: heard, measuredPower: power, tables: tables,
                               weight: stay * mass * spread / (spread + variance))
        calibration.learnOffsets(readings: heard, measuredPower: power, tables: tables, hypotheses: slots.count, weight: stay,
                                 region: { Int(slots[$0].region) },
                                 probability: { counts($0) && posterior[$0] >= 0.01 ? Double(posterior[$0]) : 0 })
    }

    /// Since when the device has been where the recorded history puts it: in its current region,
    /// or in none (since it left one; `t`, a device not yet recorded anywhere, has just arrived).
    func placeSince(at t: Double) -> Double {
        current >= 0 ? visitEntered : outsideSince.isNaN ? t : outsideSince
    }

    /// One second in four, pseudo-randomly, by a hash of its first reading's RSSI sum and gateway.
    static func sampled(_ heard: [RegionTracker.Heard]) -> Bool {
        guard let first = heard.first else { return false }
        let key = UInt64(first.sum.bitPattern) << 32 | UInt64(UInt32(bitPattern: first.gateway))
        return (key &* 0x9E37_79B9_7F4A_7C15) >> 62 == 0
    }

    /// What a confident second teaches the reception curve: each online gateway of the monitored
    /// set is one opportunity at the RSSI the model expects for `region` (on the gateway's raw
    /// scale), reported or not. A reporting gateway counts only when another one reported too, as
    /// a silent one always does (the likelihood weighs silences only in seconds with evidence).
    /// Static, given the device's links and readings: as a method called on the device being
    /// closed (an inout `self`) with `calibration` inout too, the optimiser copied the whole device
    /// state, every array retained and released, for each call.
    static func learnReception(links: [Link], heard: [RegionTracker.Heard], region: Int32, level: Float, at t: Double,
                               _ ctx: FusionContext, _ health: [GatewayHealth], _ calibration: inout VenueCalibration) {
        let tables = ctx.tracker, G = tables.gatewayCount, base = Int(region) * G
        let n = Float(calibration.pathLossExponent), w = Float(calibration.roomLossDB)
        let h = heard.count, silence = ctx.parameters.gatewaySilenceS
        for li in links.indices {
            let gateway = links[li].gateway, g = Int(gateway)
            let wasReported = heard.contains { $0.gateway == gateway }
            if wasReported ? h < 2 : !health[g].isObservable(at: t, silence: silence) { continue }
            let expected = level + n * tables.logDistance[base + g] - w * tables.otherRoom[base + g]
                - Float(ctx.gatewayOffset[g]) - calibration.appliedOffset(g)
            calibration.reception.learn(gateway: g, expected: expected, reported: wasReported)
        }
    }

    /// Relative predicted probability below which a region's likelihood is not evaluated.
    static let beam: Float = 1e-4

    /// The move matrix (`MotionModel.matrix`) over the current slots for a gap of `gap` seconds.
    func transition(gap: Double, _ ctx: FusionContext) -> [Float] {
        Self.transition(gap: gap, over: slots, center: Self.setCenter(of: slots, ctx), ctx)
    }

    /// The region whose monitored set (`FusionContext.monitoredSets`) the slots are, in its order,
    /// so that its precomputed movement tables apply; nil when they are not a site's set (restored
    /// from another site version).
    static func setCenter(of slots: [Slot], _ ctx: FusionContext) -> Int? {
        guard let first = slots.first?.region else { return nil }
        let center = Int(first)
        // Through the buffers (twice per device-second): `zip(…).allSatisfy` did not unroll to this.
        let same = ctx.monitoredSets[center].withUnsafeBufferPointer { set in
            slots.withUnsafeBufferPointer { slots in
                guard set.count == slots.count else { return false }
                for k in 0..<set.count where set[k] != slots[k].region { return false }
                return true
            }
        }
        return same ? center : nil
    }

    /// `transition(gap:over:center:_:)` transposed, for the tracker's backward pass.
    static func transposedTransition(gap: Double, over slots: [Slot], center: Int?, _ ctx: FusionContext) -> [Float] {
        if gap <= 1, let center { return ctx.tracker.topology[center].oneSecondTransposed }
        return SetTopology.transposed(transition(gap: gap, over: slots, center: center, ctx), m: slots.count)
    }

    /// The move matrix over `slots` for a gap of `gap` seconds; `center` is their
    /// `setCenter(of:_:)`.
    static func transition(gap: Double, over slots: [Slot], center: Int?, _ ctx: FusionContext) -> [Float] {
        let m = slots.count
        if let center {
            // Not a copy of the whole topology (each of its arrays retained) for the one matrix.
            if gap <= 1 { return ctx.tracker.topology[center].oneSecond }
            let topo = ctx.tracker.topology[center]
            return ctx.tracker.motion.matrix(gap: gap, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m,
                                            unlinked: topo.unlinked)
        }
        // The slots are not a site's monitored set (restored from another site version): build it.
        let set = slots.map(\.region)
        let topo = SetTopology.build(site: ctx.site, sets: [set], motion: ctx.tracker.motion)[0]
        return ctx.tracker.motion.matrix(gap: gap, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m,
                                         unlinked: topo.unlinked)
    }

    /// Publishes the live region when it changed or its probability moved by 0.1 or more: the
    /// filter's most probable region while the device is in the venue, none otherwise.
    mutating func publishLive(at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        var region: Int32 = -1, p: Float = 0
        if isPresent || current >= 0, let (k, q) = RegionTracker.argmax(tracker.alpha), k < slots.count {
            region = slots[k].region
            p = q
        }
        guard region != liveRegion || abs(p - liveConfidence) >= 0.1 else { return }
        liveRegion = region
        liveConfidence = p
        out.append(.live(.init(t: t, device: id, region: region >= 0 ? ctx.regionIDs[Int(region)] : nil,
                               confidence: region >= 0 ? (Double(p) * 1000).rounded() / 1000 : nil)))
    }

    /// Smooths the oldest pending second and records its decision. A device in the venue with no
    /// current region enters the most probable region at once. A device in a region moves only
    /// when another region is at least `switchOdds` times as probable as the current one in the
    /// smoothed probabilities and has led them for `minimumLeadS`, so the hesitation delays the
    /// record, not its times: the move is
    /// dated at the start of the second from which the evidence held (`RegionTracker.changePoint`)
    /// best fits "the old region before, the new one after", searched from `lag` seconds before
    /// the first second in which the new region led without interruption up to that second. A
    /// region that leads for a moment and falls back (one second's noise at 55 : 45) is never
    /// recorded.
    mutating func finalizeOldest(at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        // The set is checked once here, not in each step of the backward pass.
        let set = slots, m = tracker.stateCount, center = Self.setCenter(of: set, ctx)
        withUnsafeTemporaryAllocation(of: Float.self, capacity: m) { posterior in
            let time = tracker.finalizeOldest(into: posterior, keepingPast: RegionTracker.pastCount(lag: ctx.tracker.lag)) { gap in
                Self.transposedTransition(gap: Double(gap), over: set, center: center, ctx)
            }
            record(smoothed: UnsafeBufferPointer(posterior), time: time, at: t, ctx, into: &out)
        }
    }

    /// The decision `finalizeOldest` records for a smoothed second (`posterior`, first evidence at
    /// `time`).
    private mutating func record(smoothed posterior: UnsafeBufferPointer<Float>, time: Double, at t: Double, _ ctx: FusionContext,
                                 into out: inout [FusionOutput]) {
        guard let (k, p) = RegionTracker.argmax(posterior), k < slots.count else { return }
        let region = slots[k].region
        if current < 0 {
            guard isPresent else { challenger = -1; return }
            // A device entering has no region to hold against. It is entered where the smoothed
            // probabilities lead with the odds a move needs (against the runner-up) or, when no
            // region does, where they lead once the smoothing lag has passed; either way dated at
            // its first second in the venue. One ambiguous second must not record a visit the next
            // seconds contradict.
            if challenger < 0 { challengerSince = time }
            challenger = region
            var runnerUp: Float = 0
            for (i, q) in posterior.enumerated() where i != k { runnerUp = max(runnerUp, q) }
            guard p >= Self.switchOdds * runnerUp || time - challengerSince >= Double(ctx.tracker.lag) else { return }
            challenger = -1
            enter(region, at: challengerSince, confidence: p, ctx, into: &out)
            return
        }
        guard region != current else { challenger = -1; return }
        if region != challenger {
            challenger = region
            challengerSince = time
        }
        let from = slotIndex(of: current)
        let held = from.map { $0 < posterior.count ? posterior[$0] : 0 } ?? 0
        guard p >= Self.switchOdds * held, time - challengerSince >= Self.minimumLeadS else { return }
        var since = challengerSince
        if let from {
            let firstLed = Int64(challengerSince.rounded(.down))
            let second = tracker.changePoint(from: from, to: k, firstLed: firstLed, lookBack: ctx.tracker.lag, after: visitEntered)
            since = Double(second)
        }
        challenger = -1
        move(to: region, since: since, at: t, confidence: p, ctx, into: &out)
    }

    /// How many times more probable than the current region another region must be before the
    /// recorded history moves to it (posterior odds 2 : 1). A false move costs a false visit and
    /// a flap, a late one only the seconds of hesitation, which the move's back-dating returns.
    static let switchOdds: Float = 2

    /// How long (s) another region must have led the smoothed probabilities, from the first
    /// reading of the first second it led to that of the second that confirms the move, before the
    /// recorded history moves to it: a region that takes the lead at 2 : 1 for a moment — a device
    /// walking past a side room's door, or through the gap between two regions where a third
    /// region's gateway is the nearest — is not a visit. The tracker's own unit of evidence, one
    /// second; the move is still dated where the evidence turned, so waiting costs the record's
    /// delay, not its accuracy.
    static let minimumLeadS: Double = 1

    /// Records every pending second (no later evidence is coming within the lag, or the device
    /// leaves).
    mutating func flushPending(at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        while tracker.pendingCount > 0 { finalizeOldest(at: t, ctx, into: &out) }
        // No more evidence is coming for now: an entry still undecided goes to the region that led.
        if current < 0, challenger >= 0, isPresent {
            let region = challenger
            challenger = -1
            enter(region, at: challengerSince, ctx, into: &out)
        }
    }
}
