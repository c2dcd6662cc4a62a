import WaymarkCore

/// What `waymark homeassistant` publishes (docs/home-assistant.md). Nothing about a device is
/// published unless it is in ``devices``: tracked devices are people's belongings, and an operator
/// chooses which ones a Home Assistant instance may follow.
public struct HomeAssistantSettings: Sendable, Equatable {
    /// The Waymark topic prefix (`waymark/v1/<site>` unless the site's services set another).
    public var topicPrefix: String
    /// Home Assistant's MQTT discovery prefix (its default is `homeassistant`).
    public var discoveryPrefix = "homeassistant"
    /// The allow-list: one Home Assistant device with a region sensor each.
    public var devices: [HomeAssistantDevice] = []
    /// An occupancy sensor per region.
    public var regions = true
    /// A connectivity sensor per gateway (and one for the aggregator).
    public var gateways = true
    /// `sw_version` in the discovery payloads.
    public var version = ""

    public init(topicPrefix: String) { self.topicPrefix = topicPrefix }
}

/// One allow-listed device: its Waymark id and the name Home Assistant shows.
public struct HomeAssistantDevice: Sendable, Equatable {
    public var id: DeviceID
    public var name: String?

    public init(id: DeviceID, name: String? = nil) {
        self.id = id
        self.name = name
    }

    /// The name shown when the allow-list gives none: the id's kind and its last part
    /// (`iBeacon 1:7`, `MAC 24-ce`), which says which tag it is without spelling out the id.
    public var displayName: String {
        if let name { return name }
        let parts = id.rawValue.split(separator: ":")
        switch id.kind {
        case .ibeacon, .altbeacon: return "\(id.kind == .ibeacon ? "iBeacon" : "AltBeacon") \(parts.suffix(2).joined(separator: ":"))"
        case .eddystone: return "Eddystone \(parts.last ?? "")"
        case .mac: return "Tag \(parts.last.map { String($0.suffix(5)) } ?? "")"
        case .anon: return "Device"
        }
    }

    /// Reads an allow-list entry, `DEVICE_ID` or `DEVICE_ID=Name`.
    public static func parse(_ text: String) -> Result<HomeAssistantDevice, EntryError> {
        let trimmed = text.trimmingWhitespace()
        let idText: String
        var name: String?
        if let eq = trimmed.firstIndex(of: "=") {
            idText = String(trimmed[..<eq]).trimmingWhitespace()
            name = String(trimmed[trimmed.index(after: eq)...]).trimmingWhitespace()
        } else {
            idText = trimmed
        }
        guard let id = DeviceID(idText) else {
            return .failure(.init("'\(idText)' is not a device id; write ibeacon:<uuid>:<major>:<minor>, eddystone:<namespace>:<instance>, altbeacon:<id1>:<id2>:<id3> or mac:aa-bb-cc-dd-ee-ff (as in the aggregator's …/devices/<id>/state topics), optionally followed by =Name"))
        }
        if id.kind == .anon {
            return .failure(.init("'\(idText)' is a pseudonym, which changes every day; Home Assistant would collect a new device daily. Allow-list a beacon or MAC id instead"))
        }
        if let n = name {
            guard !n.isEmpty, n.utf8.count <= 64, !n.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                return .failure(.init("the name after '=' in '\(text)' must be 1–64 characters without control characters"))
            }
        }
        return .success(HomeAssistantDevice(id: id, name: name))
    }

    /// Why an allow-list entry cannot be used, and what to write instead.
    public struct EntryError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}

extension String {
    /// Without leading and trailing ASCII white space (the module has no Foundation).
    func trimmingWhitespace() -> String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
