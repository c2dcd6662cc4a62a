import WaymarkCore

/// Timers (exit after `exit_delay_s`, journey end after `journey_timeout_s`) and gateway outages.
extension DeviceState {
    /// When `region` became observable (one of its gateways online and not silent), or nil when it
    /// is not observable at `t`.
    static func availableSince(_ region: Int32, at t: Double, _ ctx: FusionContext, _ health: [GatewayHealth]) -> Double? {
        var since: Double? = nil
        for g in ctx.regionGateways[Int(region)] where health[Int(g)].isObservable(at: t, silence: ctx.parameters.gatewaySilenceS) {
            since = min(since ?? .infinity, health[Int(g)].availableSince)
        }
        return since
    }

    /// Fires every timer due at or before `t`, each with its own time: the tracker's open second
    /// once `t` is past it, its pending seconds once the smoothing lag passed without newer
    /// evidence, exits after `exit_delay_s` (and the leave to no region when the last monitored
    /// region is left), journey ends.
    mutating func expire(upTo t: Double, _ ctx: FusionContext, _ health: [GatewayHealth], _ calibration: inout VenueCalibration,
                         into out: inout [FusionOutput]) {
        if tracker.hasOpenSecond && Double(tracker.openSecond) + 1 <= t { closeSecond(ctx, health, &calibration, into: &out) }
        if tracker.pendingCount > 0 && Double(tracker.lastSecond + 1) + Double(ctx.tracker.lag) <= t {
            flushPending(at: lastTime, ctx, into: &out)
        }
        let exitDelay = ctx.parameters.exitDelayS
        for i in slots.indices where slots[i].state != .outside {
            guard let since = Self.availableSince(slots[i].region, at: t, ctx, health) else { continue }
            let deadline = max(slots[i].lastQualifying, since) + exitDelay
            guard deadline <= t else { continue }
            if holdsAtEdge(slots[i], at: deadline, ctx) {
                // Heard within the radius but never within the shorter `exit_margin_db` radius for
                // the whole buffer: the device stands at the region's edge rather than walking
                // away, so it stays inside, with its buffer re-armed from that latest sighting.
                slots[i].lastQualifying = slots[i].lastHeard
                continue
            }
            slots[i].state = .outside
            out.append(stateOutput(slots[i], at: deadline, ctx))
        }
        // Not heard by any gateway for the exit delay: the device is in no region (Core Location's
        // buffered exit, applied to the device as a whole; the visit ends at the last evidence).
        if current >= 0 && lastTime + exitDelay <= t { leaveAll(at: lastTime + exitDelay, exited: lastTime, ctx, into: &out) }
        if current < 0, journeyActive, !outsideSince.isNaN, outsideSince + ctx.parameters.journeyTimeoutS <= t {
            endJourney(ended: outsideSince, at: outsideSince + ctx.parameters.journeyTimeoutS, ctx, into: &out)
        }
        refreshDeadline(ctx, health, at: t)
    }

    /// Whether an inside slot whose exit buffer ran out at `deadline` was last heard, within the
    /// staleness window, at a distance inside its radius. Only possible with `exit_margin_db` > 0
    /// (otherwise that sighting would have re-armed the buffer); it keeps a device standing between
    /// the two radii from leaving and re-entering every `exit_delay_s`.
    func holdsAtEdge(_ s: Slot, at deadline: Double, _ ctx: FusionContext) -> Bool {
        ctx.parameters.exitMarginDB > 0 && s.state == .inside && s.lastHeard > s.lastQualifying
            && deadline - s.lastHeard <= ctx.parameters.stalenessS
            && Double(s.distance) <= ctx.regionRadius[Int(s.region)]
    }

    mutating func endJourney(ended: Double, at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        out.append(.journey(.init(t: t, device: id, started: journeyStarted, ended: ended,
                                  regions: journeyRegions.map { ctx.regionIDs[Int($0)] })))
        journeyStarted = .nan
        journeyRegions = []
        outsideSince = .nan
    }

    /// The earliest pending timer. Evidence only moves timers later, so between refreshes this
    /// is a safe lower bound.
    mutating func refreshDeadline(_ ctx: FusionContext, _ health: [GatewayHealth], at t: Double) {
        var next = Double.infinity
        if tracker.hasOpenSecond { next = Double(tracker.openSecond) + 1 }
        if tracker.pendingCount > 0 { next = min(next, Double(tracker.lastSecond + 1) + Double(ctx.tracker.lag)) }
        if current >= 0 { next = min(next, lastTime + ctx.parameters.exitDelayS) }
        for s in slots where s.state != .outside {
            guard let since = Self.availableSince(s.region, at: t, ctx, health) else { continue }
            next = min(next, max(s.lastQualifying, since) + ctx.parameters.exitDelayS)
        }
        if current < 0, journeyActive, !outsideSince.isNaN { next = min(next, outsideSince + ctx.parameters.journeyTimeoutS) }
        if let forget = forgetTime(ctx) { next = min(next, forget) }
        nextDeadline = next
    }

    /// Whether nothing is left to decide for this device: in no region, no journey open, no second
    /// of evidence waiting in the tracker. Only such a device may be forgotten.
    var isIdle: Bool {
        current < 0 && !journeyActive && !tracker.hasOpenSecond && tracker.pendingCount == 0 && !isPresent
    }

    /// When the engine forgets this device (`forget_after_s` after its last evidence), or nil
    /// while it is not idle or forgetting is off.
    func forgetTime(_ ctx: FusionContext) -> Double? {
        let after = ctx.parameters.forgetAfterS
        guard after > 0, isIdle else { return nil }
        return lastTime + after
    }

    /// Regions whose every gateway is now offline or silent become `unknown` at `t`. The current
    /// region is not left for that: the tracker goes on with the gateways that still hear the
    /// device, and a device no gateway hears leaves after `exit_delay_s` like any other.
    mutating func markUnobservable(gateway: Int32, at t: Double, _ ctx: FusionContext, _ health: [GatewayHealth],
                                   into out: inout [FusionOutput]) {
        for i in slots.indices where slots[i].state != .unknown {
            guard ctx.regionGateways[Int(slots[i].region)].contains(gateway),
                  Self.availableSince(slots[i].region, at: t, ctx, health) == nil else { continue }
            slots[i].state = .unknown
            out.append(stateOutput(slots[i], at: t, ctx))
        }
    }

    /// The device is in no region any more: the pending seconds are recorded, then the current
    /// visit ends at `exited` (its last evidence), reported at `t`.
    mutating func leaveAll(at t: Double, exited: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        flushPending(at: exited, ctx, into: &out)
        guard current >= 0 else { return }
        leave(exitedAt: min(exited, t), at: t, ctx, into: &out)
        publishLive(at: t, ctx, into: &out)
    }

    /// Closes the open visit and journey at `t` (end of input).
    mutating func finish(at t: Double, _ ctx: FusionContext, _ health: [GatewayHealth], _ calibration: inout VenueCalibration,
                         into out: inout [FusionOutput]) {
        expire(upTo: t, ctx, health, &calibration, into: &out)
        closeSecond(ctx, health, &calibration, into: &out)
        flushPending(at: t, ctx, into: &out)
        if current >= 0 {
            closeVisit(exited: t, at: t, ctx, into: &out)
            current = -1
            outsideSince = t
        }
        if journeyActive { endJourney(ended: outsideSince.isNaN ? t : outsideSince, at: t, ctx, into: &out) }
    }
}
