import WaymarkCore
import WaymarkFusion

/// What the aggregator publishes per device, kept from the engine's outputs: current region,
/// state per monitored region, and the monitored set. Bounded per device by the set size.
struct DeviceViews: Sendable {
    struct RegionView: Sendable {
        var state: RegionState
        var proximity: Proximity
        var distanceM: Double?
    }

    struct View: Sendable {
        /// The recorded (smoothed) current region.
        var current: String?
        /// The live region (published at once) and its probability.
        var live: String?
        var confidence: Double?
        var regions: [String: RegionView] = [:]
        var monitored: [String] = []
        var updatedAt = 0.0
        /// Evidence time of the second that last changed the live region, until a state is
        /// published, and the live region the last published state showed (`.some(nil)`: none;
        /// nil: no state published yet), for `AggregatorCore.publishedLiveChanges`.
        var liveChangedAt: Double?
        var publishedLive: String??
    }

    var views: [DeviceID: View] = [:]
    var dirtyState = Set<DeviceID>()
    var dirtyMonitored = Set<DeviceID>()
    /// Devices whose live region changed since their state was last published: their state goes
    /// out at once (`AggregatorCore.takeLiveChanges`), the others' at the publication interval.
    var liveChanged = Set<DeviceID>()
    var monitoredSize = 20

    func current(of device: DeviceID) -> String? { views[device]?.current }

    // Each view is changed in place (`views[device, default:]`): a copy taken out and stored
    // back shared its region dictionary with the stored one, so every state change copied it.

    mutating func apply(_ s: FusionOutput.StateChange) {
        update(s.device, at: s.t) { v in
            v.regions[s.region] = RegionView(state: s.state, proximity: s.proximity, distanceM: s.distanceM)
        }
        dirtyState.insert(s.device)
    }

    mutating func apply(_ l: FusionOutput.LocationChange) {
        update(l.device, at: l.t) { v in v.current = l.region }
        dirtyState.insert(l.device)
    }

    mutating func apply(_ l: FusionOutput.LiveLocation) {
        var changed = false
        update(l.device, at: l.t) { v in
            if v.live != l.region || v.liveChangedAt == nil && v.publishedLive == nil {
                v.liveChangedAt = l.t
                changed = true
            }
            v.live = l.region
            v.confidence = l.confidence
        }
        if changed { liveChanged.insert(l.device) }
        dirtyState.insert(l.device)
    }

    /// Changes `device`'s view (a new one when it has none) and moves its time on to `t`.
    private mutating func update(_ device: DeviceID, at t: Double, _ change: (inout View) -> Void) {
        Self.update(&views[device, default: View()], at: t, change)
    }

    private static func update(_ v: inout View, at t: Double, _ change: (inout View) -> Void) {
        change(&v)
        v.updatedAt = max(v.updatedAt, t)
    }

    /// The engine forgot the device: nothing of it is left to publish.
    mutating func forget(_ device: DeviceID) {
        views[device] = nil
        dirtyState.remove(device)
        dirtyMonitored.remove(device)
        liveChanged.remove(device)
    }

    mutating func apply(_ m: FusionOutput.MonitoredSet) {
        let size = monitoredSize
        update(m.device, at: m.t) { v in
            v.monitored = Array(m.regions.prefix(size))
            // Region state is only meaningful inside the set: drop what rotated out.
            let kept = Set(v.monitored)
            v.regions = v.regions.filter { kept.contains($0.key) }
        }
        dirtyMonitored.insert(m.device)
        dirtyState.insert(m.device)
    }
}

/// One MQTT message to send.
public struct Publication: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool
}
