import WaymarkCore
import WaymarkFusion

/// The JSON the aggregator publishes (documented in docs/aggregator.md). Built by hand: these are
/// small, fixed shapes sent at high rates, and ids are validated to contain no characters that
/// need escaping (region ids from the site file are escaped anyway).
enum DevicePayloads {
    /// `…/events`: `{"type":"enter","device":…,"region":…,"t":…,"proximity":…,"distance_m":…}`.
    static func event(_ s: FusionOutput.StateChange, kind: String) -> [UInt8] {
        let j = JSONText()
        j.object {
            j.member("type", kind)
            j.member("device", s.device.rawValue)
            j.member("region", s.region)
            j.member("t", s.t)
            j.member("proximity", s.proximity.rawValue)
            j.member("distance_m", s.distanceM)
        }
        return j.bytes
    }

    /// `…/events`: `{"type":"region_change","device":…,"from":…|null,"to":…|null,"t":…,"confidence":…|null}`
    /// (the recorded, smoothed change; `confidence` is the tracker's probability of `to`).
    static func regionChange(_ l: FusionOutput.LocationChange, from: String?) -> [UInt8] {
        let j = JSONText()
        j.object {
            j.member("type", "region_change")
            j.member("device", l.device.rawValue)
            j.member("from", from)
            j.member("to", l.region)
            j.member("t", l.t)
            j.member("confidence", l.confidence)
        }
        return j.bytes
    }

    /// `…/devices/<device>/state` (retained).
    static func state(_ device: DeviceID, _ v: DeviceViews.View) -> [UInt8] {
        let j = JSONText()
        j.object {
            j.member("device", device.rawValue)
            j.member("current_region", v.live ?? v.current)
            j.member("confidence", v.live != nil ? v.confidence : nil)
            j.member("recorded_region", v.current)
            j.key("regions")
            // The monitored regions that have a state, in the set's order (one lookup each).
            j.array(v.monitored.lazy.compactMap { region in v.regions[region].map { (region, $0) } }) { region, r in
                j.object {
                    j.member("region", region)
                    j.member("state", r.state.rawValue)
                    j.member("proximity", r.proximity.rawValue)
                    j.member("distance_m", r.distanceM)
                }
            }
            j.member("updated_at", v.updatedAt)
        }
        return j.bytes
    }

    /// `…/devices/<device>/monitored` (retained): ordered regions with their iBeacon identities.
    static func monitored(_ device: DeviceID, _ v: DeviceViews.View, site: Site) -> [UInt8] {
        let j = JSONText()
        j.object {
            j.member("device", device.rawValue)
            j.key("regions")
            j.array(v.monitored) { region in
                j.object {
                    j.member("region", region)
                    if let beacon = site.region(region)?.ibeacon {
                        j.key("ibeacon")
                        j.object {
                            j.member("uuid", beacon.uuid.description)
                            j.member("major", beacon.major.map(Double.init))
                            j.member("minor", beacon.minor.map(Double.init))
                        }
                    } else {
                        j.member("ibeacon", nil as String?)
                    }
                }
            }
            j.member("updated_at", v.updatedAt)
        }
        return j.bytes
    }

    /// `…/gateways/<gw>/ack`: `{"boot":…,"seq":…}`.
    static func ack(_ a: GatewayAck) -> [UInt8] {
        let j = JSONText()
        j.object {
            j.member("boot", a.boot)
            j.key("seq")
            j.raw(String(a.seq))
            if let from = a.resendFrom, let to = a.resendTo {
                j.key("resend_from")
                j.raw(String(from))
                j.key("resend_to")
                j.raw(String(to))
            }
        }
        return j.bytes
    }
}

/// A tiny JSON writer for the payloads above (a class so that the nested builder closures can
/// write to the same buffer).
final class JSONText {
    /// Written by one builder at a time: no dynamic exclusivity checks on every byte.
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) private var needsComma = false

    init() { bytes.reserveCapacity(256) }

    func object(_ body: () -> Void) {
        bytes.append(0x7B); needsComma = false
        body()
        bytes.append(0x7D); needsComma = true
    }

    func array<Items: Sequence>(_ items: Items, _ body: (Items.Element) -> Void) {
        bytes.append(0x5B); needsComma = false
        for item in items { comma(); needsComma = false; body(item); needsComma = true }
        bytes.append(0x5D); needsComma = true
    }

    /// A key: always one of the literals above, which need no escaping (copied as they are).
    func key(_ name: StaticString) {
        comma()
        bytes.append(0x22)
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(0x22)
        bytes.append(0x3A)
        needsComma = false
    }

    func member(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { bytes.append(contentsOf: "null".utf8) }
        needsComma = true
    }

    func member(_ name: StaticString, _ value: Double?) {
        key(name)
        if let value, value.isFinite {
            utf8(value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value))
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
        needsComma = true
    }

    func raw(_ text: String) {
        utf8(text)
        needsComma = true
    }

    private func comma() { if needsComma { bytes.append(0x2C) } }

    /// The UTF-8 of `s` in one copy (appending a `String.UTF8View` went byte by byte).
    private func utf8(_ s: String) {
        if s.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil { bytes.append(contentsOf: s.utf8) }
    }

    private func string(_ s: String) {
        bytes.append(0x22)
        // Ids never need escaping: checked and copied in one go from the string's storage.
        let copied = s.utf8.withContiguousStorageIfAvailable { text -> Bool in
            for b in text where b == 0x22 || b == 0x5C || b < 0x20 { return false }
            bytes.append(contentsOf: text)
            return true
        }
        if copied == true {
            bytes.append(0x22)
            return
        }
        for b in s.utf8 {
            switch b {
            case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
            case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
            case 0..<0x20: bytes.append(contentsOf: Array("\\u00\(b < 16 ? "0" : "")\(String(b, radix: 16))".utf8))
            default: bytes.append(b)
            }
        }
        bytes.append(0x22)
    }
}
