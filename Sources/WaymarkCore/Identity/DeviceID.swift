/// The identity of a tracked device, as a typed string that is safe in one MQTT topic level.
///
/// Forms (DESIGN.md §3):
/// - `ibeacon:<uuid lower-case with dashes>:<major>:<minor>`
/// - `eddystone:<namespace hex (10 bytes)>:<instance hex (6 bytes)>`
/// - `altbeacon:<id1>:<id2>:<id3>` (id1 as a UUID when 16 bytes, else hex; id2/id3 decimal)
/// - `mac:<aa-bb-cc-dd-ee-ff>` (lower case, dashes)
/// - `anon:<hex>` for a pseudonymous (keyed-hash) address, only when the site enables it
public struct DeviceID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public let rawValue: String

    public enum Kind: String, Sendable, CaseIterable { case ibeacon, eddystone, altbeacon, mac, anon }

    /// Validates `text` as one of the forms above.
    public init?(_ text: String) {
        guard DeviceID.isValid(text) else { return nil }
        self.rawValue = text
    }

    private init(unchecked: String) { self.rawValue = unchecked }

    public static func ibeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16) -> DeviceID {
        DeviceID(unchecked: "ibeacon:\(uuid):\(major):\(minor)")
    }

    public static func eddystone(namespace: some Sequence<UInt8>, instance: some Sequence<UInt8>) -> DeviceID {
        DeviceID(unchecked: "eddystone:\(Hex.encode(namespace)):\(Hex.encode(instance))")
    }

    public static func altbeacon(id1: some Collection<UInt8>, id2: UInt16, id3: UInt16) -> DeviceID {
        let first = BeaconUUID(bytes: id1).map(\.description) ?? Hex.encode(id1)
        return DeviceID(unchecked: "altbeacon:\(first):\(id2):\(id3)")
    }

    /// `address` most significant byte first (as printed by BlueZ).
    public static func mac(_ address: some Collection<UInt8>) -> DeviceID {
        DeviceID(unchecked: "mac:" + address.map { Hex.encode([$0]) }.joined(separator: "-"))
    }

    public static func anonymous(hash: some Sequence<UInt8>) -> DeviceID {
        DeviceID(unchecked: "anon:\(Hex.encode(hash))")
    }

    /// Parses a MAC address written `aa:bb:cc:dd:ee:ff` or `aa-bb-cc-dd-ee-ff` (any case).
    public static func parseMAC(_ text: String) -> [UInt8]? {
        let parts = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var out: [UInt8] = []
        for p in parts {
            guard p.utf8.count == 2, let b = Hex.decode(p), b.count == 1 else { return nil }
            out.append(b[0])
        }
        return out
    }

    public var kind: Kind {
        Kind(rawValue: String(rawValue.prefix(while: { $0 != ":" })))!
    }

    public var description: String { rawValue }

    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = DeviceID(text) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "'\(text)' is not a device id (expected ibeacon:…, eddystone:…, altbeacon:…, mac:… or anon:…)"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
