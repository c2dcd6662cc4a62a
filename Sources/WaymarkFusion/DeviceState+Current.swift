import WaymarkCore

/// The current region (DESIGN.md §3): choice, hysteresis, adjacency, inferred paths, visits,
/// journeys and monitored-set rotation.
extension DeviceState {
    /// Picks the current region among the inside regions at `t`: fast entry when there is none,
    /// a switch only for a challenger that leads by the margin for the dwell (stricter when it is
    /// not adjacent), and a move or a leave when the current region is no longer inside.
    mutating func evaluateCurrent(at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        var best = -1, bestRank = Int.max, bestDistance = Double.infinity, cur = -1
        // The best inside region that is also within its radius now: the only kind of challenger.
        var near = -1, nearRank = Int.max, nearDistance = Double.infinity
        for i in slots.indices {
            if slots[i].region == current { cur = i }
            guard slots[i].state == .inside else { continue }
            let (p, d) = proximity(slots[i], at: t, ctx)
            let distance = d ?? .infinity
            if p.rank < bestRank || (p.rank == bestRank && distance < bestDistance) {
                best = i; bestRank = p.rank; bestDistance = distance
            }
            if distance <= ctx.regionRadius[Int(slots[i].region)],
               p.rank < nearRank || (p.rank == nearRank && distance < nearDistance) {
                near = i; nearRank = p.rank; nearDistance = distance
            }
        }
        if current < 0 {
            challenger = -1
            if best >= 0 { enter(slots[best].region, at: t, ctx, into: &out) }
            return
        }
        if cur < 0 || slots[cur].state != .inside {
            let left = cur >= 0 ? min(slots[cur].lastQualifying, t) : t
            if best >= 0 {
                move(to: slots[best].region, since: max(left, min(slots[best].enteredAt, t)), at: t, ctx, into: &out)
            } else {
                leave(exitedAt: left, at: t, ctx, into: &out)
            }
            return
        }
        if ctx.parameters.challengerWithinRadius { best = near; bestDistance = nearDistance }
        guard best >= 0, best != cur else { challenger = -1; return }
        let p = ctx.parameters
        let rival = slots[best].region
        let adjacent = ctx.isAdjacent(current, rival)
        let incumbent = proximity(slots[cur], at: t, ctx).1 ?? .infinity
        let lead = ctx.leadDB(incumbent: incumbent, challenger: bestDistance)
        guard lead > 0, lead >= (adjacent ? p.switchMarginDB : p.nonadjacentMarginDB) else { challenger = -1; return }
        if challenger != rival { challenger = rival; challengerSince = t }
        let dwell = !adjacent ? p.nonadjacentDwellS
            : lead >= p.strongSwitchMarginDB ? p.strongSwitchDwellS : p.switchDwellS
        if t - challengerSince >= dwell {
            // The switch happened when the rival became the only region within its radius (it was
            // entered and the current one had been left), if that was before its lead began.
            let alone = max(slots[best].enteredAt, slots[cur].lastQualifying)
            move(to: rival, since: min(challengerSince, alone), at: t, ctx, into: &out)
        }
    }

    /// Enters `region` with no current region before.
    mutating func enter(_ region: Int32, at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        current = region
        visitEntered = t
        challenger = -1
        if !journeyActive { journeyStarted = t; journeyRegions.removeAll() }
        appendToJourney(region, ctx)
        outsideSince = .nan
        out.append(.location(.init(t: t, device: id, region: ctx.regionIDs[Int(region)])))
        rotate(around: region, at: t, ctx, into: &out)
    }

    /// Leaves the current region for none; the visit ends at the last qualifying evidence.
    mutating func leave(exitedAt left: Double, at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        guard current >= 0 else { return }
        closeVisit(exited: left, at: t, ctx, into: &out)
        current = -1
        challenger = -1
        outsideSince = max(left, visitEntered)
        nextDeadline = min(nextDeadline, outsideSince + ctx.parameters.journeyTimeoutS)
        out.append(.location(.init(t: t, device: id, region: nil)))
    }

    /// Moves from the current region to `region`; the switch happened at `since` and was confirmed
    /// at `t`. The transition into `region` and the location change carry the switch time (`since`,
    /// not before the current visit began). A non-adjacent move records the shortest graph path
    /// between them as inferred visits: the device passed them between leaving the old region (its
    /// last sighting within the radius) and the switch, so the old visit ends there and that gap
    /// is shared equally among the regions in between, in path order.
    mutating func move(to region: Int32, since: Double, at t: Double, adopting: Link? = nil,
                       _ ctx: FusionContext, into out: inout [FusionOutput]) {
        let old = current
        let switchTime = max(since, visitEntered)
        let between = ctx.isAdjacent(old, region) ? [] : ctx.pathBetween(old, region)
        var left = switchTime
        if !between.isEmpty, let si = slotIndex(of: old) {
            left = max(visitEntered, min(slots[si].lastQualifying, switchTime))
        }
        closeVisit(exited: left, at: t, ctx, into: &out)
        var previous = old
        let share = (switchTime - left) / Double(max(between.count, 1))
        for (k, mid) in between.enumerated() {
            let entered = left + share * Double(k)
            let exited = k == between.count - 1 ? switchTime : left + share * Double(k + 1)
            out.append(.transition(.init(t: entered, device: id, from: ctx.regionIDs[Int(previous)],
                                         to: ctx.regionIDs[Int(mid)], inferred: true)))
            out.append(.visit(.init(t: t, device: id, region: ctx.regionIDs[Int(mid)],
                                    entered: entered, exited: exited, inferred: true)))
            appendToJourney(mid, ctx)
            previous = mid
        }
        out.append(.transition(.init(t: switchTime, device: id, from: ctx.regionIDs[Int(previous)],
                                     to: ctx.regionIDs[Int(region)], inferred: previous != old)))
        current = region
        visitEntered = switchTime
        challenger = -1
        appendToJourney(region, ctx)
        // The change carries the time it happened (the evidence), not the confirming sighting.
        out.append(.location(.init(t: switchTime, device: id, region: ctx.regionIDs[Int(region)])))
        rotate(around: region, at: t, ctx, into: &out)
        if let link = adopting { adopt(link, region: region, at: t, ctx, into: &out) }
    }

    mutating func closeVisit(exited: Double, at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        out.append(.visit(.init(t: t, device: id, region: ctx.regionIDs[Int(current)],
                                entered: visitEntered, exited: max(exited, visitEntered), inferred: false)))
    }

    mutating func appendToJourney(_ region: Int32, _ ctx: FusionContext) {
        if journeyRegions.last != region && journeyRegions.count < ctx.parameters.journeyMaxRegions {
            journeyRegions.append(region)
        }
    }

    /// Makes the monitored set the one around `region`, keeping the state and filters of regions
    /// that stay; new regions start `unknown`.
    mutating func rotate(around region: Int32, at t: Double, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        let target = ctx.monitoredSets[Int(region)]
        if slots.count == target.count && slots.first?.region == region
            && zip(slots, target).allSatisfy({ $0.region == $1 }) { return }
        var newSlots: [Slot] = []
        newSlots.reserveCapacity(target.count)
        var newLinks: [Link] = []
        newLinks.reserveCapacity(target.count)
        for r in target {
            newSlots.append(slotIndex(of: r).map { slots[$0] } ?? Slot(region: r, lastQualifying: t))
            for g in ctx.regionGateways[Int(r)] where !newLinks.contains(where: { $0.gateway == g }) {
                newLinks.append(linkIndex(of: g).map { links[$0] } ?? Link(gateway: g))
            }
        }
        slots = newSlots
        links = newLinks
        nextDeadline = min(nextDeadline, t + ctx.parameters.exitDelayS)
        out.append(.monitored(.init(t: t, device: id, regions: target.map { ctx.regionIDs[Int($0)] })))
    }
}
