public import WaymarkCore

/// A device's fusion state, saved so that a restarted aggregator resumes where it stopped
/// (DESIGN.md §2). Regions and gateways are stored by site id, so a checkpoint survives edits to
/// the site file: state for regions or gateways that no longer exist is dropped on restore.
/// Encodes with any `Encoder` (no non-finite numbers in the encoded form).
public struct DeviceCheckpoint: Codable, Sendable, Hashable {
    public var device: DeviceID
    /// Site ids of the regions the state refers to, by local index.
    var regions: [String]
    /// Site ids of the gateways the state refers to, by local index.
    var gateways: [String]
    /// The device state with region and gateway indices local to the two tables above, and
    /// non-finite numbers replaced by finite sentinels.
    var state: DeviceState
    /// The device's position in the engine that saved it (not encoded: stored beside the
    /// checkpoint). Restore checkpoints in this order and the engine visits its devices as before.
    public var ordinal: Int = 0

    enum CodingKeys: String, CodingKey { case device, regions, gateways, state }
}

extension FusionEngine {
    /// The state of one device, or nil when the engine does not know it.
    public func checkpoint(device: DeviceID) -> DeviceCheckpoint? {
        deviceIndex[device].map { i in
            var cp = checkpoint(of: devices[Int(i)])
            cp.ordinal = Int(i)
            return cp
        }
    }

    /// The state of every device.
    public func checkpoint() -> [DeviceCheckpoint] {
        devices.indices.filter { !vacant[$0] }.map { i in
            var cp = checkpoint(of: devices[i])
            cp.ordinal = i
            return cp
        }
    }

    /// Restores a device's state (replacing any state the engine has for it) and returns its handle.
    /// A device new to the engine takes the slot of its `ordinal` when that slot is free, so that
    /// an engine restored from every checkpoint visits its devices in the order of the engine that
    /// saved them, forgotten devices' free slots included (`FusionEngine+Forget.swift`).
    @discardableResult
    public mutating func restore(_ saved: DeviceCheckpoint) -> DeviceHandle {
        let regionMap = saved.regions.map { site.regionIndex($0).map(Int32.init) }
        let gatewayMap = saved.gateways.map { site.gatewayIndex($0).map(Int32.init) }
        var state = saved.state.mapped(
            region: { $0 >= 0 && Int($0) < regionMap.count ? regionMap[Int($0)] : nil },
            gateway: { $0 >= 0 && Int($0) < gatewayMap.count ? gatewayMap[Int($0)] : nil })
            .withFiniteSentinels(false)
        // When the site lost a region or gateway the state refers to, force a timer check on the
        // next call; otherwise the saved deadline stands, so a restart changes nothing (issue 19).
        if regionMap.contains(where: { $0 == nil }) || gatewayMap.contains(where: { $0 == nil }) {
            state.nextDeadline = -.infinity
        }
        // Checkpoints from before forgetting existed may have been saved idle with no forget time.
        if let forget = state.forgetTime(ctx) { state.nextDeadline = min(state.nextDeadline, forget) }
        let handle = deviceIndex[saved.device].map(DeviceHandle.init(index:))
            ?? claimSlot(saved.ordinal, for: saved.device).map(DeviceHandle.init(index:))
            ?? self.handle(for: saved.device)
        devices[Int(handle.index)] = state
        return handle
    }

    private func checkpoint(of d: DeviceState) -> DeviceCheckpoint {
        var regionLocal = LocalNumbering(), regions: [String] = []
        var gatewayLocal = LocalNumbering(), gateways: [String] = []
        let state = d.mapped(
            region: { r in
                let (l, new) = regionLocal.number(r)
                if new { regions.append(ctx.regionIDs[Int(r)]) }
                return l
            },
            gateway: { g in
                let (l, new) = gatewayLocal.number(g)
                if new { gateways.append(ctx.gatewayIDs[Int(g)]) }
                return l
            })
        return DeviceCheckpoint(device: d.id, regions: regions, gateways: gateways, state: state.withFiniteSentinels(true))
    }
}

/// Site indices numbered 0, 1, 2, … in order of first use: a checkpoint's local region or gateway
/// table. A device refers to a few dozen at most (its monitored set's regions and gateways, its
/// journey), so they are found by a linear search, which for so few costs less than hashing each
/// into a dictionary (the aggregator checkpoints every active device at each write); past
/// `linearLimit` (a long journey) a dictionary takes over.
struct LocalNumbering {
    private var order: [Int32] = []
    private var index: [Int32: Int32]? = nil
    static let linearLimit = 64

    /// The local number of site index `i`, and whether it is new (just numbered).
    mutating func number(_ i: Int32) -> (local: Int32, isNew: Bool) {
        if let index {
            if let l = index[i] { return (l, false) }
        } else if let l = order.firstIndex(of: i) {
            return (Int32(l), false)
        }
        let l = Int32(order.count)
        order.append(i)
        if index != nil {
            index![i] = l
        } else if order.count > Self.linearLimit {
            index = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, Int32($0)) })
        }
        return (l, true)
    }
}

extension DeviceState {
    /// A copy with every region and gateway index passed through the maps; entries that map to
    /// nil are dropped (a lost current region becomes none).
    func mapped(region: (Int32) -> Int32?, gateway: (Int32) -> Int32?) -> DeviceState {
        var s = self
        s.current = current >= 0 ? region(current) ?? -1 : -1
        s.liveRegion = liveRegion >= 0 ? region(liveRegion) ?? -1 : -1
        s.challenger = challenger >= 0 ? region(challenger) ?? -1 : -1
        s.slots = slots.compactMap { slot in region(slot.region).map { var x = slot; x.region = $0; return x } }
        s.links = links.compactMap { link in gateway(link.gateway).map { var x = link; x.gateway = $0; return x } }
        s.candidate = candidate.gateway >= 0 ? gateway(candidate.gateway).map { var x = candidate; x.gateway = $0; return x } ?? Link(gateway: -1) : candidate
        s.journeyRegions = journeyRegions.compactMap(region)
        // The tracker's vectors follow the slots; when a region vanished they no longer line up
        // (nor do they in a damaged checkpoint: `RegionTracker.isConsistent`).
        if s.slots.count != slots.count || !tracker.isConsistent {
            s.tracker = RegionTracker()
        } else {
            s.tracker.heard = tracker.heard.compactMap { h in gateway(h.gateway).map { var x = h; x.gateway = $0; return x } }
        }
        return s
    }

    /// Replaces ±∞ and NaN by finite sentinels (`encode` true) or back (false), so that JSON
    /// encoders accept the state.
    func withFiniteSentinels(_ encode: Bool) -> DeviceState {
        let big = 1e300
        func t(_ v: Double) -> Double {
            if encode { return v.isNaN ? -big * 1.5 : v == .infinity ? big : v == -.infinity ? -big : v }
            return v <= -big * 1.5 ? .nan : v >= big ? .infinity : v <= -big ? -.infinity : v
        }
        func f(_ v: Float) -> Float {
            if encode { return v == .infinity ? .greatestFiniteMagnitude : v }
            return v == .greatestFiniteMagnitude ? .infinity : v
        }
        var s = self
        s.visitEntered = t(visitEntered)
        s.tracker.openTime = t(s.tracker.openTime)
        s.candidateSince = t(candidateSince)
        s.journeyStarted = t(journeyStarted)
        s.outsideSince = t(outsideSince)
        s.nextDeadline = t(nextDeadline)
        s.lastTime = t(lastTime)
        for i in s.slots.indices {
            s.slots[i].distance = f(s.slots[i].distance)
            s.slots[i].lastHeard = t(s.slots[i].lastHeard)
            s.slots[i].lastQualifying = t(s.slots[i].lastQualifying)
            s.slots[i].enteredAt = t(s.slots[i].enteredAt)
        }
        for i in s.links.indices {
            s.links[i].distance = f(s.links[i].distance)
            s.links[i].filter.lastTime = t(s.links[i].filter.lastTime)
        }
        s.candidate.distance = f(s.candidate.distance)
        s.candidate.filter.lastTime = t(s.candidate.filter.lastTime)
        return s
    }
}

/// One gateway's health as the engine knows it, saved with the aggregator's checkpoint so that a
/// restarted aggregator does not take its own downtime for the gateways' silence (issue 19).
public struct GatewayHealthCheckpoint: Codable, Sendable, Hashable {
    public var reportedOffline: Bool
    public var silenceHandled: Bool
    /// nil: never heard.
    public var lastHeard: Double?
    public var availableSince: Double?
}

extension FusionEngine {
    /// Every gateway's health, by gateway id.
    public func gatewayHealthCheckpoint() -> [String: GatewayHealthCheckpoint] {
        var out: [String: GatewayHealthCheckpoint] = [:]
        for (g, h) in health.enumerated() {
            out[ctx.gatewayIDs[g]] = GatewayHealthCheckpoint(
                reportedOffline: h.reportedOffline, silenceHandled: h.silenceHandled,
                lastHeard: h.lastHeard.isFinite ? h.lastHeard : nil,
                availableSince: h.availableSince.isFinite ? h.availableSince : nil)
        }
        return out
    }

    /// Restores saved gateway health (gateways matched by id; unknown ids are ignored).
    public mutating func restore(gatewayHealth saved: [String: GatewayHealthCheckpoint]) {
        for (id, s) in saved {
            guard let g = site.gatewayIndex(id) else { continue }
            health[g] = GatewayHealth(reportedOffline: s.reportedOffline, silenceHandled: s.silenceHandled,
                                      lastHeard: s.lastHeard ?? -.infinity, availableSince: s.availableSince ?? -.infinity)
        }
    }
}
