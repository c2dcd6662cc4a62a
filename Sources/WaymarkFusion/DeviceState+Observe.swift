import WaymarkCore

/// One validated, interned reading handed to a device.
struct Reading {
    var gateway: Int32
    var rssi: Float
    var measuredPower: Double
    var weight: Float
    var time: Double
}

extension DeviceState {
    /// Applies one reading: timers up to its time, the tracker's previous second when this one
    /// starts a new second, the filter of its gateway and the states of the monitored regions it
    /// anchors (Core Location's region state, distance and proximity), re-acquisition when it is
    /// outside the set, and the tracker's open second. Returns whether the reading was rejected as
    /// an outlier. `reach`: how far beyond a region's radius a reading may still give a device in
    /// no region its monitored set (`VenueCalibration.reach`; 1 but in a venue still learning its
    /// level in which nothing has been placed).
    mutating func observe(_ r: Reading, reach: Double, _ ctx: FusionContext, _ health: [GatewayHealth],
                          _ calibration: inout VenueCalibration, into out: inout [FusionOutput]) -> Bool {
        if r.time >= nextDeadline { expire(upTo: r.time, ctx, health, &calibration, into: &out) }
        if tracker.hasOpenSecond, r.time.rounded(.down) > Double(tracker.openSecond) {
            closeSecond(ctx, health, &calibration, into: &out)
        }
        lastTime = max(lastTime, r.time)
        var rejected = false
        let pathLoss = ctx.pathLoss(calibration)
        let offset = ctx.gatewayOffset[Int(r.gateway)] + Double(calibration.appliedOffset(Int(r.gateway)))
        let power = r.measuredPower + calibration.powerCorrectionDB
        if let li = linkIndex(of: r.gateway) {
            rejected = links[li].filter.update(rssi: r.rssi, weight: r.weight, at: r.time, tuning: ctx.tuning) == .rejected
            let corrected = Double(links[li].filter.level) + offset
            links[li].distance = Float(pathLoss.distance(rssi: corrected, measuredPower: power))
            for region in ctx.gatewayRegions[Int(r.gateway)] {
                guard let si = slotIndex(of: region) else { continue }
                updateSlot(si, at: r.time, qualifies: !rejected, ctx, into: &out)
            }
        } else {
            rejected = observeOutsideSet(r, pathLoss: pathLoss, offset: offset, power: power, reach: current < 0 ? reach : 1,
                                         ctx, health, into: &out)
        }
        // Every reading joins the open second, also those heard before the monitored set exists
        // (a device's first readings, until one qualifies): which of a moment's readings arrives
        // first must not decide what the second says. A second closed with no set is dropped.
        tracker.add(gateway: r.gateway, rssi: r.rssi + Float(ctx.gatewayOffset[Int(r.gateway)]), weight: r.weight,
                    power: r.measuredPower, at: r.time)
        if !slots.isEmpty { nextDeadline = min(nextDeadline, Double(tracker.openSecond) + 1) }
        return rejected
    }

    /// Recomputes a slot's distance from its gateways' links after a sighting at `t`, and enters
    /// the region at once when the distance is within its radius. A sighting the filter rejected as
    /// an outlier (`qualifies` false) left the level where it was: it shows the device was heard,
    /// but it is no evidence of being within the radius, so it neither enters the region nor
    /// re-arms its exit timer (a device walking away reads much weaker than the level, and those
    /// rejected readings used to hold the region for the length of the outlier run).
    mutating func updateSlot(_ si: Int, at t: Double, qualifies: Bool = true, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        let region = Int(slots[si].region)
        var best = Float.infinity
        for g in ctx.regionGateways[region] {
            guard let li = linkIndex(of: g), links[li].filter.isFresh(at: t, staleness: ctx.parameters.stalenessS) else { continue }
            best = min(best, links[li].distance)
        }
        slots[si].distance = best
        slots[si].lastHeard = max(slots[si].lastHeard, t)
        guard qualifies, Double(best) <= ctx.regionRadius[region] else { return }
        if slots[si].state != .inside {
            slots[si].state = .inside
            slots[si].enteredAt = t
            slots[si].lastQualifying = max(slots[si].lastQualifying, t)
            out.append(stateOutput(slots[si], at: t, ctx))
        } else if Double(best) <= ctx.stayRadius[region] {
            slots[si].lastQualifying = max(slots[si].lastQualifying, t)
        }
    }

    /// A gateway anchoring no monitored region heard the device. Keeps the strongest such gateway
    /// as the re-acquisition candidate and rebuilds the set around its region when the device has
    /// no current region, or when it has been heard inside the candidate region — and inside none
    /// of its monitored regions — for `reacquire_s`. `reach` widens the candidate's radius while
    /// the venue's level is still being learned (`VenueCalibration.reach`; for a device in no
    /// region): a set to track it in, whose seconds teach the level.
    mutating func observeOutsideSet(_ r: Reading, pathLoss: PathLoss, offset: Double, power: Double, reach: Double,
                                    _ ctx: FusionContext, _ health: [GatewayHealth], into out: inout [FusionOutput]) -> Bool {
        guard let region = ctx.gatewayRegions[Int(r.gateway)].first else { return false }
        let staleness = ctx.parameters.stalenessS
        if candidate.gateway != r.gateway {
            if candidate.gateway >= 0, candidate.filter.isFresh(at: r.time, staleness: staleness),
               Double(candidate.filter.level) + ctx.gatewayOffset[Int(candidate.gateway)]
                >= Double(r.rssi) + ctx.gatewayOffset[Int(r.gateway)] {
                return false  // a stronger candidate is already being watched
            }
            candidate = Link(gateway: r.gateway)
            candidateSince = .infinity
        }
        let rejected = candidate.filter.update(rssi: r.rssi, weight: r.weight, at: r.time, tuning: ctx.tuning) == .rejected
        let corrected = Double(candidate.filter.level) + offset
        let distance = pathLoss.distance(rssi: corrected, measuredPower: power)
        candidate.distance = Float(distance)
        guard distance <= ctx.regionRadius[Int(region)] * reach else {
            candidateSince = .infinity
            return rejected
        }
        if candidateSince == .infinity { candidateSince = r.time }
        if current >= 0 {
            guard r.time - candidateSince >= ctx.parameters.reacquireS,
                  !slots.contains(where: { $0.lastQualifying >= candidateSince && $0.state == .inside })
            else { return rejected }
        }
        reacquire(region: region, at: r.time, ctx, into: &out)
        return rejected
    }

    /// Rebuilds the monitored set around `region`, handing it the candidate's filter. A device with
    /// a current region jumps there (a move), and its tracker starts over on it: the old set said
    /// nothing about this part of the venue. A device entering the venue has only been heard
    /// within one region's radius by one gateway, the first to qualify among readings that may
    /// have come in any order: its tracker starts undecided over the new set, and the second's
    /// evidence from every gateway picks the region (`DeviceState.record`).
    mutating func reacquire(region: Int32, at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        let since = candidateSince.isFinite ? candidateSince : t
        let wasPresent = current >= 0
        let handed = candidate
        candidate = Link(gateway: -1)
        candidateSince = .infinity
        if current >= 0 {
            flushPending(at: t, ctx, into: &out)
        }
        if current >= 0 && current != region {
            move(to: region, since: since, at: t, adopting: handed, ctx, into: &out)
        } else {
            rotate(around: region, at: t, ctx, into: &out)
            adopt(handed, region: region, at: t, ctx, into: &out)
        }
        tracker.reset(states: slots.count, on: wasPresent ? slotIndex(of: region) : nil)
    }

    /// Installs a filter carried over from the candidate and updates the region's slot with it.
    mutating func adopt(_ link: Link, region: Int32, at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        if let li = linkIndex(of: link.gateway) { links[li] = link }
        if let si = slotIndex(of: region) { updateSlot(si, at: t, ctx, into: &out) }
    }
}
