import WaymarkCore
import WaymarkJSON

/// The MQTT discovery configurations (Home Assistant's documented single-component schema:
/// `<discovery prefix>/<component>/<node id>/<object id>/config`, a JSON object with `unique_id`,
/// a `device` block, an `origin` block, topics and templates). Every entity belongs to a Home
/// Assistant device; the site itself is a device that the others name as `via_device`.
public struct HomeAssistantDiscovery: Sendable {
    public let site: Site
    public let settings: HomeAssistantSettings
    public let names: HomeAssistantNames

    public init(site: Site, settings: HomeAssistantSettings) {
        self.site = site
        self.settings = settings
        names = HomeAssistantNames(site: site.id, topicPrefix: settings.topicPrefix, discoveryPrefix: settings.discoveryPrefix)
    }

    /// Every configuration the settings ask for, in a stable order.
    public func configurations() -> [HAPublication] {
        var out: [HAPublication] = []
        for d in settings.devices { out.append(publication("sensor", names.deviceObjectID(d.id), deviceSensor(d))) }
        if settings.regions {
            for r in site.regions { out.append(publication("sensor", names.regionObjectID(r.id), occupancySensor(r))) }
        }
        // The aggregator's sensor describes the site's device, which every other one is `via_device` of.
        out.append(publication("binary_sensor", names.aggregatorObjectID, aggregatorSensor()))
        if settings.gateways {
            for g in site.gateways { out.append(publication("binary_sensor", names.gatewayObjectID(g.id), gatewaySensor(g))) }
        }
        return out
    }

    /// A device's region sensor: the current region's name, `not_home` outside every region.
    func deviceSensor(_ d: HomeAssistantDevice) -> JSONValue {
        let state = names.deviceState(d.id)
        return .object([
            ("name", .string("Region")),
            ("unique_id", .string(names.uniqueID(names.deviceObjectID(d.id)))),
            ("state_topic", .string(state)),
            ("value_template", .string("{{ value_json.state }}")),
            ("json_attributes_topic", .string(state)),
            ("json_attributes_template", .string("{{ value_json.attributes | tojson }}")),
            ("icon", .string("mdi:map-marker-radius")),
            ("qos", .int(1)),
            ("availability", availability(names.deviceAvailability(d.id))),
            ("availability_mode", .string("all")),
            ("device", .object([
                ("identifiers", .array([.string(names.deviceIdentifier(d.id))])),
                ("name", .string(d.displayName)),
                ("manufacturer", .string("Waymark")),
                ("model", .string(Self.model(of: d.id))),
                ("via_device", .string(names.hubIdentifier)),
            ])),
            ("origin", origin),
        ])
    }

    /// A region's occupancy: how many devices the aggregator places there now.
    func occupancySensor(_ r: Region) -> JSONValue {
        .object([
            ("name", .string("Occupancy")),
            ("unique_id", .string(names.uniqueID(names.regionObjectID(r.id)))),
            ("state_topic", .string(names.occupancy(r.id))),
            ("state_class", .string("measurement")),
            ("unit_of_measurement", .string("devices")),
            ("icon", .string("mdi:account-multiple")),
            ("qos", .int(1)),
            ("availability", availability(names.siteAvailability)),
            ("availability_mode", .string("all")),
            ("device", .object([
                ("identifiers", .array([.string(names.regionIdentifier(r.id))])),
                ("name", .string(r.name)),
                ("manufacturer", .string("Waymark")),
                ("model", .string("Region")),
                ("suggested_area", .string(r.name)),
                ("via_device", .string(names.hubIdentifier)),
            ])),
            ("origin", origin),
        ])
    }

    /// A gateway's connectivity, read straight from its retained status (no Waymark service needs
    /// to run for it to be right).
    func gatewaySensor(_ g: Gateway) -> JSONValue {
        let status = names.topics.status(g.id)
        var device: [(String, JSONValue)] = [
            ("identifiers", .array([.string(names.gatewayIdentifier(g.id))])),
            ("name", .string("Gateway \(g.id)")),
            ("manufacturer", .string("Waymark")),
            ("model", .string(site.foreignGateways.contains { $0.gateway == g.id } ? "Foreign receiver (waymark bridge)" : "Gateway (waymark-edge)")),
        ]
        if let region = site.regions.first(where: { $0.gateways.contains(g.id) }) { device.append(("suggested_area", .string(region.name))) }
        device.append(("via_device", .string(names.hubIdentifier)))
        return .object([
            ("name", .string("Connectivity")),
            ("unique_id", .string(names.uniqueID(names.gatewayObjectID(g.id)))),
            ("device_class", .string("connectivity")),
            ("entity_category", .string("diagnostic")),
            ("state_topic", .string(status)),
            ("value_template", .string(Self.onlineTemplate)),
            ("json_attributes_topic", .string(status)),
            ("qos", .int(1)),
            ("device", .object(device)),
            ("origin", origin),
        ])
    }

    /// The aggregator's connectivity, on the site's own device (which this configuration describes
    /// in full; the others refer to it by identifier).
    func aggregatorSensor() -> JSONValue {
        .object([
            ("name", .string("Aggregator")),
            ("unique_id", .string(names.uniqueID(names.aggregatorObjectID))),
            ("device_class", .string("connectivity")),
            ("entity_category", .string("diagnostic")),
            ("state_topic", .string(names.topics.aggregatorStatus)),
            ("value_template", .string(Self.onlineTemplate)),
            ("json_attributes_topic", .string(names.topics.aggregatorStatus)),
            ("qos", .int(1)),
            ("device", hubDevice),
            ("origin", origin),
        ])
    }

    /// The site's device.
    var hubDevice: JSONValue {
        .object([
            ("identifiers", .array([.string(names.hubIdentifier)])),
            ("name", .string("Waymark \(site.id)")),
            ("manufacturer", .string("Waymark")),
            ("model", .string("Site")),
            ("sw_version", .string(settings.version)),
        ])
    }

    /// Available while the aggregators that feed the entity run (`topic`: a device's own
    /// availability, which follows its shard's owner, or the site's, which needs every shard's;
    /// `HomeAssistantBridge` derives both from the aggregators' retained statuses) and this output
    /// is connected (its own status, whose last will says `offline` if it dies).
    func availability(_ topic: String) -> JSONValue {
        .array([
            .object([("topic", .string(topic)), ("value_template", .string("{{ value_json.state }}"))]),
            .object([("topic", .string(names.bridgeStatus)), ("value_template", .string("{{ value_json.state }}"))]),
        ])
    }

    var origin: JSONValue {
        .object([("name", .string("Waymark")), ("sw_version", .string(settings.version))])
    }

    static let onlineTemplate = "{{ 'ON' if value_json.state == 'online' else 'OFF' }}"

    static func model(of id: DeviceID) -> String {
        switch id.kind {
        case .ibeacon: "iBeacon"
        case .eddystone: "Eddystone"
        case .altbeacon: "AltBeacon"
        case .mac: "BLE device"
        case .anon: "Pseudonymous device"
        }
    }

    private func publication(_ component: String, _ objectID: String, _ config: JSONValue) -> HAPublication {
        var bytes: [UInt8] = []
        config.render(into: &bytes)
        return HAPublication(topic: names.configTopic(component: component, objectID: objectID), payload: bytes, retain: true)
    }
}
