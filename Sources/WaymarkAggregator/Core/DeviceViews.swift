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
    var monitoredSize = 20

    func current(of device: DeviceID) -> String? { views[device]?.current }

    mutating func apply(_ s: FusionOutput.StateChange) {
        var v = views[s.device] ?? View()
        v.regions[s.region] = RegionView(state: s.state, proximity: s.proximity, distanceM: s.distanceM)
        v.updatedAt = max(v.updatedAt, s.t)
        views[s.device] = v
        dirtyState.insert(s.device)
    }

    mutating func apply(_ l: FusionOutput.LocationChange) {
        var v = views[l.device] ?? View()
        v.current = l.region
        v.updatedAt = max(v.updatedAt, l.t)
        views[l.device] = v
        dirtyState.insert(l.device)
    }

    mutating func apply(_ l: FusionOutput.LiveLocation) {
        var v = views[l.device] ?? View()
        if v.live != l.region || v.liveChangedAt == nil && v.publishedLive == nil { v.liveChangedAt = l.t }
        v.live = l.region
        v.confidence = l.confidence
        v.updatedAt = max(v.updatedAt, l.t)
        views[l.device] = v
        dirtyState.insert(l.device)
    }

    /// The engine forgot the device: nothing of it is left to publish.
    mutating func forget(_ device: DeviceID) {
        views[device] = nil
        dirtyState.remove(device)
        dirtyMonitored.remove(device)
    }

    mutating func apply(_ m: FusionOutput.MonitoredSet) {
        var v = views[m.device] ?? View()
        v.monitored = Array(m.regions.prefix(monitoredSize))
        // Region state is only meaningful inside the set: drop what rotated out.
        let kept = Set(v.monitored)
        v.regions = v.regions.filter { kept.contains($0.key) }
        v.updatedAt = max(v.updatedAt, m.t)
        views[m.device] = v
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
