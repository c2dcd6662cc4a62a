public import WaymarkCore

/// A device's state for one region of its monitored set (Core Location's `CLRegionState`).
public enum RegionState: String, Sendable, Codable, Hashable {
    case unknown, inside, outside
}

/// How close a device is to a region (Core Location's `CLProximity`).
public enum Proximity: String, Sendable, Codable, Hashable {
    case immediate, near, far, unknown

    /// Sort rank: nearer buckets first, `unknown` last.
    var rank: Int {
        switch self {
        case .immediate: 0
        case .near: 1
        case .far: 2
        case .unknown: 3
        }
    }
}

/// What the fusion engine decided. Every output names the device, the region(s) by site id, and
/// `t`: the time of the evidence (Unix seconds), never the time of processing.
public enum FusionOutput: Sendable, Hashable {
    /// The device's state for one region changed.
    case state(StateChange)
    /// The device's recorded current region changed (`region` nil: it is in none). This is the
    /// smoothed history: decided `smoothing_lag_s` after the evidence, dated at the evidence.
    case location(LocationChange)
    /// The device's live region (the tracker's filtered estimate, published at once) changed, or
    /// its probability moved by 0.1 or more.
    case live(LiveLocation)
    /// A visit ended (or was inferred along a path).
    case visit(Visit)
    /// The device's monitored set was rotated or rebuilt.
    case monitored(MonitoredSet)
    /// A journey ended.
    case journey(Journey)
    /// The device moved from one region to the next (one per step of an inferred path).
    case transition(Transition)
    /// The engine forgot the device (`forget_after_s`): idle and not heard for that long. Nothing
    /// about it is open; if it is heard again it starts afresh.
    case forgotten(Forgotten)

    public struct StateChange: Sendable, Hashable {
        public var t: Double
        public var device: DeviceID
        public var region: String
        public var state: RegionState
        public var proximity: Proximity
        /// Smoothed distance estimate in metres; nil when the device has not been heard recently.
        public var distanceM: Double?
    }

    public struct LocationChange: Sendable, Hashable {
        /// When the device's current region changed: for an entry from no region, the sighting
        /// that entered it; for a switch, when the winning region's lead began or, if earlier, when
        /// it became the only region within its radius (the same time as the visits and the
        /// transition it closes and opens), so it can lie seconds before the sighting that
        /// confirmed it; for a leave, the time the exit timer fired.
        public var t: Double
        public var device: DeviceID
        public var region: String?
        /// The tracker's smoothed probability of `region` at `t` (nil when leaving to none).
        public var confidence: Double?

        public init(t: Double, device: DeviceID, region: String?, confidence: Double? = nil) {
            self.t = t
            self.device = device
            self.region = region
            self.confidence = confidence
        }
    }

    public struct LiveLocation: Sendable, Hashable {
        /// The time of the evidence that decided it.
        public var t: Double
        public var device: DeviceID
        /// nil: in no region.
        public var region: String?
        /// The filtered probability of `region` (nil when in no region).
        public var confidence: Double?
    }

    public struct Visit: Sendable, Hashable {
        /// The time of the evidence that closed the visit.
        public var t: Double
        public var device: DeviceID
        public var region: String
        public var entered: Double
        public var exited: Double
        public var inferred: Bool
        public var dwellS: Double { exited - entered }
    }

    public struct MonitoredSet: Sendable, Hashable {
        public var t: Double
        public var device: DeviceID
        /// Region ids, the current (or re-acquired) region first, then by shortest-path length.
        public var regions: [String]
    }

    public struct Journey: Sendable, Hashable {
        public var t: Double
        public var device: DeviceID
        public var started: Double
        public var ended: Double
        /// Regions in the order they were visited (consecutive repeats collapsed).
        public var regions: [String]
    }

    public struct Transition: Sendable, Hashable {
        public var t: Double
        public var device: DeviceID
        public var from: String
        public var to: String
        public var inferred: Bool
    }

    public struct Forgotten: Sendable, Hashable {
        /// When it was forgotten: the engine's first tick at least `forget_after_s` after
        /// `lastHeard` at which nothing was left open for it.
        public var t: Double
        public var device: DeviceID
        /// The time of its last evidence (nil: none of its readings was accepted).
        public var lastHeard: Double?
    }

    /// The time of the evidence.
    public var t: Double {
        switch self {
        case .state(let o): o.t
        case .location(let o): o.t
        case .live(let o): o.t
        case .visit(let o): o.t
        case .monitored(let o): o.t
        case .journey(let o): o.t
        case .transition(let o): o.t
        case .forgotten(let o): o.t
        }
    }

    /// The device the output is about.
    public var device: DeviceID {
        switch self {
        case .state(let o): o.device
        case .location(let o): o.device
        case .live(let o): o.device
        case .visit(let o): o.device
        case .monitored(let o): o.device
        case .journey(let o): o.device
        case .transition(let o): o.device
        case .forgotten(let o): o.device
        }
    }

    /// The `type` of the output in the replay JSONL.
    public var type: String {
        switch self {
        case .state: "state"
        case .location: "location"
        case .live: "live"
        case .visit: "visit"
        case .monitored: "monitored"
        case .journey: "journey"
        case .transition: "transition"
        case .forgotten: "forgotten"
        }
    }
}
