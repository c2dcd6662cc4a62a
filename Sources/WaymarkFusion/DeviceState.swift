import WaymarkCore

/// Everything the engine remembers about one device. Its size is bounded by the monitored set
/// size (slots and links) and `journey_max_regions`, never by the number of regions in the venue.
///
/// Saved in every device checkpoint (`DeviceCheckpoint`, compact binary). To add a stored
/// property without making the checkpoints already saved unreadable (each device would start
/// afresh after the upgrade), append it at the end of the type it belongs to and decode it in a
/// hand-written `init(from:)` as `contains(key) ? decode : default` (`CompactBinaryFormat`,
/// "Fields added later"); the synthesized conformance decodes every field unconditionally and
/// refuses the older bytes.
struct DeviceState: Sendable, Hashable, Codable {
    /// One region of the monitored set.
    struct Slot: Sendable, Hashable, Codable {
        var region: Int32
        var state: RegionState = .unknown
        /// Smoothed distance to the nearest of the region's gateways (metres).
        var distance: Float = .infinity
        /// Last sighting by one of the region's gateways.
        var lastHeard: Double = -.infinity
        /// Last qualifying sighting (within `radius_m`); when the slot was added, its addition time,
        /// so that `outside` follows `exit_delay_s` after that without evidence.
        var lastQualifying: Double
        /// When the state last became `inside`.
        var enteredAt: Double = -.infinity
    }

    /// The RSSI filter of one (device, gateway) pair.
    struct Link: Sendable, Hashable, Codable {
        var gateway: Int32
        var distance: Float = .infinity
        var filter = RSSIFilter()
    }

    let id: DeviceID
    /// Current region (index into the site's regions), or -1.
    var current: Int32 = -1
    /// The region that has led the smoothed probabilities since `challengerSince` without yet being
    /// recorded (-1: none; `DeviceState.finalizeOldest`). For a device entering the venue (no
    /// current region), the region leading its entry and `challengerSince` its first second in the
    /// venue, while no region leads with the odds an entry needs. (Next to `current`: two 4-byte
    /// fields side by side leave no padding in the state.)
    var challenger: Int32 = -1
    /// When the current visit started.
    var visitEntered: Double = 0
    var slots: [Slot] = []
    /// Filters for the gateways of the monitored regions.
    var links: [Link] = []
    /// The probabilistic tracker over the monitored set (its vectors follow `slots`).
    var tracker = RegionTracker()
    var challengerSince: Double = 0
    /// The live region last published (-1: none) and its probability.
    var liveRegion: Int32 = -1
    var liveConfidence: Float = 0
    /// The strongest recent gateway heard outside the monitored set (re-acquisition), and since
    /// when its reading qualifies for one of its regions (+∞: not qualifying).
    var candidate = Link(gateway: -1)
    var candidateSince: Double = .infinity
    /// The open journey: start, regions so far, and when the device last left every region.
    var journeyStarted: Double = .nan
    var journeyRegions: [Int32] = []
    var outsideSince: Double = .nan
    /// Earliest time at which a timer (exit, journey end) may fire.
    var nextDeadline: Double = -.infinity
    /// Latest evidence time seen for this device.
    var lastTime: Double = -.infinity

    init(id: DeviceID) { self.id = id }

    var journeyActive: Bool { !journeyStarted.isNaN }

    func slotIndex(of region: Int32) -> Int? {
        slots.firstIndex { $0.region == region }
    }

    func linkIndex(of gateway: Int32) -> Int? {
        links.firstIndex { $0.gateway == gateway }
    }

    /// Whether any region of the monitored set is `inside`: the device is in the venue (Core
    /// Location's fast entry and buffered exit decide this; the tracker decides which region).
    var isPresent: Bool { slots.contains { $0.state == .inside } }

    /// Proximity and distance of a slot at `t` (unknown / nil when its gateways are stale).
    func proximity(_ s: Slot, at t: Double, _ ctx: FusionContext) -> (Proximity, Double?) {
        guard t - s.lastHeard <= ctx.parameters.stalenessS, s.distance.isFinite else { return (.unknown, nil) }
        let d = Double(s.distance)
        return (ctx.pathLoss.proximity(distance: d), d)
    }

    func stateOutput(_ s: Slot, at t: Double, _ ctx: FusionContext) -> FusionOutput {
        let (p, d) = proximity(s, at: t, ctx)
        return .state(.init(t: t, device: id, region: ctx.regionIDs[Int(s.region)], state: s.state,
                            proximity: p, distanceM: d.map { ($0 * 100).rounded() / 100 }))
    }

    /// Bytes this device's state occupies, counting the inline struct and the capacity of its
    /// arrays (the benchmark's memory accounting).
    var footprintBytes: Int {
        MemoryLayout<DeviceState>.stride
            + slots.capacity * MemoryLayout<Slot>.stride
            + links.capacity * MemoryLayout<Link>.stride
            + links.reduce(candidate.filter.outOfLineBytes) { $0 + $1.filter.outOfLineBytes }
            + journeyRegions.capacity * MemoryLayout<Int32>.stride
            + tracker.footprintBytes
            + (slots.capacity > 0 ? 32 : 0) + (links.capacity > 0 ? 32 : 0) + (journeyRegions.capacity > 0 ? 32 : 0)
            + id.rawValue.utf8.count + 16
    }
}
