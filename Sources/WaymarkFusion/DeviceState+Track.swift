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
        let weight = tracker.heard.reduce(Float(0)) { $0 + $1.count }
        let power = weight > 0 ? tracker.powerSum / Double(weight) : ctx.parameters.defaultMeasuredPowerDBm
        let closedAt = Double(second) + 1
        let model = ctx.tracker.evidence
        var shifts = [Float](repeating: 0, count: m), fits = [Float](repeating: 0, count: m)
        let likelihood = evidence(power: power, at: closedAt, ctx, health, calibration, shifts: &shifts, fits: &fits)
        // What a confident second teaches the venue calibration (before the readings are dropped).
        let readings = tracker.heard.map { h in
            (gateway: h.gateway, rssi: h.sum / h.count)
        }
        let gap = tracker.lastSecond == .min ? nil : Double(second - tracker.lastSecond)
        tracker.reserve(lag: ctx.tracker.lag)
        tracker.close(likelihood: likelihood, transition: gap.map { transition(gap: $0, ctx) })
        // Only a second the model explains well teaches: the tracker is sure of the region, the
        // device's level is within two spreads of the venue's and the typical reading within two
        // sigmas of the model (not a device heard mostly by gateways far outside its set).
        if ctx.parameters.selfCalibration, let (k, p) = RegionTracker.argmax(tracker.alpha), p >= VenueCalibration.minConfidence,
           abs(shifts[k]) <= 2 * EvidenceModel.deviceSpreadDB, fits[k] >= model.logDensity(2 * EvidenceModel.sigmaDB) {
            calibration.learn(region: Int(slots[k].region), readings: readings, b: shifts[k],
                              measuredPower: power, tables: ctx.tracker)
        }
        publishLive(at: min(closedAt, lastTime), ctx, into: &out)
        while tracker.pendingCount > ctx.tracker.lag { finalizeOldest(at: lastTime, ctx, into: &out) }
        if tracker.pendingCount > 0 { nextDeadline = min(nextDeadline, Double(tracker.lastSecond + 1) + Double(ctx.tracker.lag)) }
    }

    /// The likelihood of the open second's readings for each slot's region, scaled so that the
    /// largest is 1, and each region's fitted common offset `b` (`EvidenceModel`).
    func evidence(power: Double, at t: Double, _ ctx: FusionContext, _ health: [GatewayHealth],
                  _ calibration: VenueCalibration, shifts: inout [Float], fits: inout [Float]) -> [Float] {
        let tables = ctx.tracker, model = tables.evidence, G = tables.gatewayCount
        let n = Float(calibration.pathLossExponent), w = Float(calibration.roomLossDB)
        let level = Float(power + calibration.powerCorrectionDB)
        let h = tracker.heard.count
        var rssi = [Float](repeating: 0, count: h), gw = [Int](repeating: 0, count: h)
        for (j, r) in tracker.heard.enumerated() {
            gw[j] = Int(r.gateway)
            rssi[j] = r.sum / r.count + calibration.appliedOffset(Int(r.gateway))
        }
        // Gateways of the monitored set that are online and did not hear the device this second.
        var absent: [Int] = []
        // One miss per second, however many adverts the others heard: the adverts of one second
        // share its interference and scan gaps, and counting them separately made every other
        // gateway's silence decisive (more flaps in the accuracy suite's museum).
        let adverts: Float = 1
        if h > 0 {
            let silence = ctx.parameters.gatewaySilenceS
            for link in links where !tracker.heard.contains(where: { $0.gateway == link.gateway }) {
                let g = Int(link.gateway)
                if health[g].isObservable(at: t, silence: silence) { absent.append(g) }
            }
        }
        let m = slots.count
        var logs = [Float](repeating: 0, count: m)
        var e = [Float](repeating: 0, count: h)
        var best = -Float.infinity
        for k in 0..<m {
            let base = Int(slots[k].region) * G
            var sum: Float = 0
            for j in 0..<h {
                let expected = level + n * tables.logDistance[base + gw[j]] - w * tables.otherRoom[base + gw[j]]
                e[j] = rssi[j] - expected
                sum += e[j]
            }
            let b = sum / (Float(h) + EvidenceModel.priorCount)
            var fit: Float = 0
            for j in 0..<h { fit += model.logDensity(e[j] - b) }
            fits[k] = h > 0 ? fit / Float(h) : 0
            var ll = fit - b * b * EvidenceModel.priorScale
            for g in absent {
                // As the gateway would report it: before its site and learned offsets.
                let expected = level + b + n * tables.logDistance[base + g] - w * tables.otherRoom[base + g]
                    - Float(ctx.gatewayOffset[g]) - calibration.appliedOffset(g)
                ll += model.missLog(expected, adverts: adverts)
            }
            ll *= EvidenceModel.evidenceWeight
            logs[k] = ll
            shifts[k] = b
            best = max(best, ll)
        }
        for k in 0..<m { logs[k] = expf(logs[k] - best) }
        return logs
    }

    /// The transition matrix over the current slots for a gap of `gap` seconds.
    func transition(gap: Double, _ ctx: FusionContext) -> [Float] {
        Self.transition(gap: gap, over: slots, ctx)
    }

    static func transition(gap: Double, over slots: [Slot], _ ctx: FusionContext) -> [Float] {
        let m = slots.count
        if let center = slots.first?.region, ctx.monitoredSets[Int(center)].count == m,
           zip(ctx.monitoredSets[Int(center)], slots).allSatisfy({ $0 == $1.region }) {
            let topo = ctx.tracker.topology[Int(center)]
            return gap <= 1 ? topo.oneSecond
                : ctx.tracker.motion.matrix(gap: gap, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m)
        }
        // The slots are not a site's monitored set (restored from another site version): build it.
        let set = slots.map(\.region)
        let topo = SetTopology.build(site: ctx.site, sets: [set], motion: ctx.tracker.motion)[0]
        return ctx.tracker.motion.matrix(gap: gap, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m)
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

    /// Smooths the oldest pending second and records its decision: entering the most probable
    /// region when the device is in the venue and had no current region, moving to it when it is
    /// another region than the current one.
    mutating func finalizeOldest(at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        let set = slots
        let (time, posterior) = tracker.finalizeOldest { gap in Self.transition(gap: Double(gap), over: set, ctx) }
        guard let (k, p) = RegionTracker.argmax(posterior), k < slots.count else { return }
        let region = slots[k].region
        if current < 0 {
            if isPresent { enter(region, at: time, confidence: p, ctx, into: &out) }
        } else if region != current {
            move(to: region, since: time, at: t, confidence: p, ctx, into: &out)
        }
    }

    /// Records every pending second (no later evidence is coming within the lag, or the device
    /// leaves).
    mutating func flushPending(at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        while tracker.pendingCount > 0 { finalizeOldest(at: t, ctx, into: &out) }
    }
}
