import WaymarkCore

/// The recorded current region (DESIGN.md §3): entries, moves (with inferred paths), leaves,
/// visits, journeys and monitored-set rotation. Which region is current is the tracker's smoothed
/// decision (DeviceState+Track.swift); when the device is in no region, Core Location's region
/// states decide (no monitored region `inside`).
extension DeviceState {
    /// Enters `region` with no current region before.
    mutating func enter(_ region: Int32, at t: Double, confidence: Float? = nil, _ ctx: FusionContext, into out: inout [FusionOutput]) {
        current = region
        challenger = -1
        visitEntered = t
        if !journeyActive { journeyStarted = t; journeyRegions.removeAll() }
        appendToJourney(region, ctx)
        outsideSince = .nan
        out.append(.location(.init(t: t, device: id, region: ctx.regionIDs[Int(region)], confidence: confidence.map(Double.init))))
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
    /// is shared equally among the regions in between, in path order. When no sighting put the
    /// device within the old region's radius during the visit, the visit's whole time is shared
    /// equally among the old region and those in between.
    mutating func move(to region: Int32, since: Double, at t: Double, adopting: Link? = nil, confidence: Float? = nil,
                       _ ctx: FusionContext, into out: inout [FusionOutput]) {
        let old = current
        let switchTime = max(since, visitEntered)
        let between = ctx.isAdjacent(old, region) ? [] : ctx.pathBetween(old, region)
        var left = switchTime
        if !between.isEmpty, let si = slotIndex(of: old) {
            let lastWithin = slots[si].lastQualifying
            if lastWithin >= visitEntered {
                left = min(lastWithin, switchTime)
            } else {
                // No reading put the device within the old region's radius during this visit, so
                // nothing dates its exit: the old region gets an equal share of the time with each
                // region passed on the way (the tracker held the old region all along; ending its
                // visit at its entry recorded a 0-s visit of a region the location lines show for
                // seconds).
                left = visitEntered + (switchTime - visitEntered) / Double(between.count + 1)
            }
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
        challenger = -1
        visitEntered = switchTime
        appendToJourney(region, ctx)
        // The change carries the time it happened (the evidence), not the confirming sighting.
        out.append(.location(.init(t: switchTime, device: id, region: ctx.regionIDs[Int(region)],
                                   confidence: confidence.map(Double.init))))
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
            for g in ctx.regionListeners[Int(r)] where !newLinks.contains(where: { $0.gateway == g }) {
                newLinks.append(linkIndex(of: g).map { links[$0] } ?? Link(gateway: g))
            }
        }
        let map = target.map { r in slotIndex(of: r) }
        slots = newSlots
        links = newLinks
        tracker.remap(map)
        nextDeadline = min(nextDeadline, t + ctx.parameters.exitDelayS)
        out.append(.monitored(.init(t: t, device: id, regions: target.map { ctx.regionIDs[Int($0)] })))
    }
}
