/// A visit as a system under evaluation (or the truth) records it; `region` is an index into
/// `Site.regions`, or −1 for a region id the site does not know.
public struct ScoredVisit: Hashable, Sendable {
    public var region: Int
    public var entered: Double
    public var exited: Double
    public var inferred: Bool
    /// When the system reported the visit (the `t` of a replay `visit` line); nil when unknown.
    public var reportedAt: Double?
    public init(region: Int, entered: Double, exited: Double, inferred: Bool = false, reportedAt: Double? = nil) {
        self.region = region
        self.entered = entered
        self.exited = exited
        self.inferred = inferred
        self.reportedAt = reportedAt
    }
}

/// A change of a device's current region at time `t` (`region` nil: no current region).
public struct LocationChange: Hashable, Sendable {
    public var t: Double
    public var region: Int?
    public init(t: Double, region: Int?) { self.t = t; self.region = region }
}

/// Device ids seen in any input, numbered in order of first appearance.
public struct DeviceTable: Sendable {
    public private(set) var names: [String] = []
    private var index: [String: Int] = [:]
    public init() {}

    public mutating func id(_ name: String) -> Int {
        if let i = index[name] { return i }
        names.append(name)
        index[name] = names.count - 1
        return names.count - 1
    }

    public func existing(_ name: String) -> Int? { index[name] }
    public var count: Int { names.count }
}

/// Ground truth per device, as read from a truth file.
public struct TruthData: Sendable {
    /// Per device: true visits in time order.
    public var visits: [[ScoredVisit]] = []
    /// Per device: periods the device was in the venue (from `presence` lines; when a file has
    /// none, from its first entry to its last exit).
    public var presence: [[ClosedRange<Double>]] = []
    public var stationary: [Bool] = []
    /// Latest time covered by the truth (end of the simulated period).
    public var end: Double = -.infinity
    public init() {}

    mutating func ensure(_ device: Int) {
        while visits.count <= device { visits.append([]); presence.append([]); stationary.append(false) }
    }

    /// Total time devices spent in the venue, in hours.
    public var deviceHours: Double {
        presence.joined().reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } / 3600
    }
}

/// What one system (Waymark or the naive rule) recorded, per device.
public struct RecordedRun: Sendable {
    public var locations: [[LocationChange]] = []
    public var visits: [[ScoredVisit]] = []
    /// The live region as published (`live` lines), when the output has them.
    public var live: [[LocationChange]] = []
    public init() {}

    mutating func ensure(_ device: Int) {
        while locations.count <= device { locations.append([]); visits.append([]); live.append([]) }
    }

    /// Sorts each device's entries by time (stable, so equal times keep file order).
    mutating func normalise() {
        for d in locations.indices {
            if !isSorted(locations[d].map(\.t)) {
                locations[d] = locations[d].enumerated().sorted { ($0.element.t, $0.offset) < ($1.element.t, $1.offset) }.map(\.element)
            }
            visits[d].sort { ($0.entered, $0.exited) < ($1.entered, $1.exited) }
            if !isSorted(live[d].map(\.t)) {
                live[d] = live[d].enumerated().sorted { ($0.element.t, $0.offset) < ($1.element.t, $1.offset) }.map(\.element)
            }
        }
    }

    private func isSorted(_ a: [Double]) -> Bool {
        zip(a, a.dropFirst()).allSatisfy { $0 <= $1 }
    }
}

extension TruthData {
    /// Makes room for devices that appear only in recorded output (scored with no true visits,
    /// so everything they record counts against precision and as flaps).
    public mutating func ensureDevices(_ count: Int) {
        if count > 0 { ensure(count - 1) }
    }
}
