import WaymarkCore
import WaymarkJSON

/// The pure core of `waymark homeassistant` (docs/home-assistant.md): follows the aggregator's
/// retained device states and returns what to publish for Home Assistant — discovery
/// configurations, each allow-listed device's region state, each region's occupancy — and, at
/// start, the removal of every configuration a previous run left that the current settings no
/// longer ask for (a device taken off the allow-list, a region or gateway removed from the site).
/// It also follows the aggregators' retained statuses and publishes each allow-listed device's
/// availability (online while a running aggregator owns the device's shard: with several
/// aggregators, docs/scaling.md §1, one that stops makes only its own devices unavailable) and the
/// site's (online while every shard has one), which the entities' `availability` lists name.
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
    /// Running and stopped aggregators by status key ('' for `…/aggregator/status`).
    private var aggregators: [String: AggregatorStatusMessage] = [:]
    /// The availability last returned per topic (to publish changes only).
    private var availabilityShown: [String: Bool] = [:]
    /// Malformed device states read (the runtime logs the first and counts them).
    public private(set) var malformedStates = 0
    public private(set) var statesRead = 0

    public init(site: Site, settings: HomeAssistantSettings) {
        discovery = HomeAssistantDiscovery(site: site, settings: settings)
        allowed = Set(settings.devices.map(\.id))
        for r in site.regions { occupancy[r.id] = 0 }
    }

    /// What to subscribe to: every device state, every aggregator's status, this site's retained
    /// configurations, and Home Assistant's birth message.
    public var subscriptions: [String] {
        [names.topics.allDeviceStates, names.topics.aggregatorStatus, names.topics.aggregatorStatus + "/+", names.allConfigs,
         names.homeAssistantStatus]
    }

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
        if let key = names.topics.aggregatorStatusKey(topic) {
            return aggregatorStatus(key, payload)
        }
        if topic.hasPrefix(names.discoveryPrefix + "/"), topic.hasSuffix("/config") {
            if payload.isEmpty { existing.removeValue(forKey: topic) } else { existing.updateValue(Self.stateTopic(in: payload), forKey: topic) }
        }
        return []
    }

    /// The configurations, then every availability, allow-listed device's state and region's
    /// occupancy.
    public func everything() -> [HAPublication] {
        var out = discovery.configurations()
        out += availability().map { availabilityPublication($0.topic, $0.online) }
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
            guard let state, state.hasPrefix(names.statePrefix) else { continue }
            out.append(.removal(state))
            // A device's entity had its own availability beside its state.
            if let device = names.device(inHomeAssistantStateTopic: state) { out.append(.removal(names.deviceAvailability(device))) }
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

    /// An aggregator started, stopped (its last will, or a clean stop) or was retired (its
    /// retained status cleared): the availabilities that changed. An unreadable status changes
    /// nothing.
    private mutating func aggregatorStatus(_ key: String, _ payload: [UInt8]) -> [HAPublication] {
        if payload.isEmpty {
            aggregators.removeValue(forKey: key)
        } else {
            guard let status = AggregatorStatusMessage.parse(payload) else { return [] }
            aggregators[key] = status
        }
        var out: [HAPublication] = []
        for (topic, online) in availability() where availabilityShown[topic] != online {
            availabilityShown[topic] = online
            out.append(availabilityPublication(topic, online))
        }
        return out
    }

    /// Every availability topic with its value now: each allow-listed device's (its shard has a
    /// running owner) and, with occupancy sensors, the site's (every shard has one).
    private func availability() -> [(topic: String, online: Bool)] {
        let coverage = ShardCoverage(online: aggregators.filter { $0.value.isOnline }
            .map { .init(key: $0.key, shards: $0.value.shards, shardCount: $0.value.shardCount) })
        var out = discovery.settings.devices.map { d in (topic: names.deviceAvailability(d.id), online: coverage?.isCovered(d.id) ?? false) }
        if discovery.settings.regions { out.append((names.siteAvailability, coverage.map { $0.unowned.isEmpty } ?? false)) }
        return out
    }

    private func availabilityPublication(_ topic: String, _ online: Bool) -> HAPublication {
        .init(topic: topic, payload: Array(#"{"state":"\#(online ? "online" : "offline")"}"#.utf8))
    }

    private func occupancyPublication(_ region: String) -> HAPublication {
        .init(topic: names.occupancy(region), payload: Array(String(occupancy[region] ?? 0).utf8))
    }

    /// The `state_topic` of a discovery configuration, if it has one.
    static func stateTopic(in payload: [UInt8]) -> String? {
        payload.withUnsafeBufferPointer { bytes in (try? JSONObjectIndex(bytes))?.string("state_topic") }
    }
}
