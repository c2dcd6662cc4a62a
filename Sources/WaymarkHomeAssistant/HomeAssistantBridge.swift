import WaymarkCore
import WaymarkJSON

/// The pure core of `waymark homeassistant` (docs/home-assistant.md): follows the aggregator's
/// retained device states and returns what to publish for Home Assistant — discovery
/// configurations, each allow-listed device's region state, each region's occupancy — and, at
/// start, the removal of every configuration a previous run left that the current settings no
/// longer ask for (a device taken off the allow-list, a region or gateway removed from the site).
/// No I/O: the runtime feeds it messages and publishes what it returns.
public struct HomeAssistantBridge: Sendable {
    public let discovery: HomeAssistantDiscovery
    public var names: HomeAssistantNames { discovery.names }
    public var site: Site { discovery.site }

    private let allowed: Set<DeviceID>
    /// Region of every device the aggregator has a state for (nil: in none), for occupancy.
    private var regionOf: [DeviceID: String] = [:]
    private var occupancy: [String: Int] = [:]
    private var dirtyRegions = Set<String>()
    /// The last state payload per allow-listed device (to publish changes only).
    private var lastState: [DeviceID: [UInt8]] = [:]
    /// Retained configurations found under this site's node id, with their state topics.
    private var existing: [String: String?] = [:]
    /// Malformed device states read (the runtime logs the first and counts them).
    public private(set) var malformedStates = 0
    public private(set) var statesRead = 0

    public init(site: Site, settings: HomeAssistantSettings) {
        discovery = HomeAssistantDiscovery(site: site, settings: settings)
        allowed = Set(settings.devices.map(\.id))
        for r in site.regions { occupancy[r.id] = 0 }
    }

    /// What to subscribe to: every device state, this site's retained configurations, and Home
    /// Assistant's birth message.
    public var subscriptions: [String] { [names.topics.allDeviceStates, names.allConfigs, names.homeAssistantStatus] }

    /// What one received message asks to publish now (occupancy changes wait for
    /// ``takeOccupancy()``). A Home Assistant birth message (`online` on its status topic) asks for
    /// everything again, as its documentation recommends.
    public mutating func handle(topic: String, payload: [UInt8]) -> [HAPublication] {
        if topic == names.homeAssistantStatus {
            return String(decoding: payload, as: UTF8.self).trimmingWhitespace() == "online" ? everything() : []
        }
        if let device = names.topics.device(inStateTopic: topic) {
            return deviceState(device, payload)
        }
        if topic.hasPrefix(names.discoveryPrefix + "/"), topic.hasSuffix("/config") {
            if payload.isEmpty { existing.removeValue(forKey: topic) } else { existing.updateValue(Self.stateTopic(in: payload), forKey: topic) }
        }
        return []
    }

    /// The configurations, then every allow-listed device's state and every region's occupancy.
    public func everything() -> [HAPublication] {
        var out = discovery.configurations()
        for d in discovery.settings.devices {
            if let payload = lastState[d.id] { out.append(.init(topic: names.deviceState(d.id), payload: payload)) }
        }
        if discovery.settings.regions {
            for r in site.regions { out.append(occupancyPublication(r.id)) }
        }
        return out
    }

    /// Empty retained messages for every configuration seen under this site's node id that the
    /// settings do not publish, and for the retained state it showed.
    public func staleRemovals() -> [HAPublication] {
        let wanted = Set(discovery.configurations().map(\.topic))
        var out: [HAPublication] = []
        for (topic, state) in existing.sorted(by: { $0.key < $1.key }) where !wanted.contains(topic) {
            out.append(.removal(topic))
            if let state, state.hasPrefix(names.statePrefix) { out.append(.removal(state)) }
        }
        return out
    }

    /// Occupancy of the regions whose count changed since the last call.
    public mutating func takeOccupancy() -> [HAPublication] {
        guard discovery.settings.regions else { dirtyRegions.removeAll(); return [] }
        defer { dirtyRegions.removeAll(keepingCapacity: true) }
        return dirtyRegions.sorted().map(occupancyPublication)
    }

    /// Devices placed in `region` now.
    public func occupancy(of region: String) -> Int { occupancy[region] ?? 0 }

    private mutating func deviceState(_ device: DeviceID, _ payload: [UInt8]) -> [HAPublication] {
        var region: String?
        if payload.isEmpty {
            region = nil  // the retained state was cleared: the device is gone
        } else {
            guard let s = try? AggregatorDeviceState.parse(payload) else {
                malformedStates += 1
                return []
            }
            statesRead += 1
            region = s.currentRegion
            if allowed.contains(device) {
                let ha = HomeAssistantDeviceState.payload(s, site: site)
                if lastState[device] != ha {
                    lastState[device] = ha
                    place(device, in: region)
                    return [.init(topic: names.deviceState(device), payload: ha)]
                }
            }
        }
        place(device, in: region)
        return []
    }

    private mutating func place(_ device: DeviceID, in region: String?) {
        let old = regionOf[device]
        guard old != region else { return }
        if let old, occupancy[old] != nil { occupancy[old]! -= 1; dirtyRegions.insert(old) }
        if let region, occupancy[region] != nil { occupancy[region]! += 1; dirtyRegions.insert(region) }
        if region == nil { regionOf.removeValue(forKey: device) } else { regionOf[device] = region }
    }

    private func occupancyPublication(_ region: String) -> HAPublication {
        .init(topic: names.occupancy(region), payload: Array(String(occupancy[region] ?? 0).utf8))
    }

    /// The `state_topic` of a discovery configuration, if it has one.
    static func stateTopic(in payload: [UInt8]) -> String? {
        payload.withUnsafeBufferPointer { bytes in (try? JSONObjectIndex(bytes))?.string("state_topic") }
    }
}
