import Testing
import WaymarkCore

/// The byte-level device-id validator against a plain reference written from the grammar in
/// ``DeviceID``'s documentation, on canonical ids and many seeded mutations of them.
@Suite("Device id validation")
struct DeviceIDValidationTests {
    static let valid = [
        "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:65535",
        "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:0:0",
        "eddystone:00112233445566778899:aabbccddeeff",
        "altbeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:10",
        "altbeacon:0a1b:100:2",
        "mac:e7-8f-13-56-24-ce",
        "anon:0123456789abcdef",
    ]

    @Test("canonical ids are accepted; near misses are refused")
    func examples() {
        for id in Self.valid { #expect(DeviceID(id) != nil, "\(id)") }
        for id in ["ibeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:01:2",
                   "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:65536", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1",
                   "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2:3", "mac:e7:8f:13:56:24:ce", "mac:e7-8f-13-56-24",
                   "anon:0123456", "anon:0123456789abcde", "altbeacon:0:1:2", "eddystone:0011:aabb", "beacon:1", "", ":", "mac:"] {
            #expect(DeviceID(id) == nil, "\(id)")
        }
    }

    @Test("agrees with the reference grammar on 200,000 seeded mutations")
    func agreesWithReference() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let alphabet = Array("0123456789abcdefABCDEF:-xé".unicodeScalars)
        var disagreements: [String] = []
        for _ in 0..<200_000 {
            var chars = Array(Self.valid[next() % Self.valid.count].unicodeScalars)
            for _ in 0..<(1 + next() % 3) {
                let at = next() % (chars.count + 1)
                switch next() % 3 {
                case 0: chars.insert(alphabet[next() % alphabet.count], at: at)
                case 1: if at < chars.count { chars.remove(at: at) }
                default: if at < chars.count { chars[at] = alphabet[next() % alphabet.count] }
                }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: chars)
            if (DeviceID(text) != nil) != Self.reference(text) { disagreements.append(text) }
        }
        #expect(disagreements.isEmpty, "first disagreements: \(disagreements.prefix(5))")
    }

    /// The grammar, written for clarity rather than speed.
    static func reference(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        func lowerHex(_ s: String, bytes: Int) -> Bool {
            s.count == bytes * 2 && s.allSatisfy { "0123456789abcdef".contains($0) }
        }
        func u16(_ s: String) -> Bool {
            guard let v = Int(s), s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
            return v <= 65535 && String(v) == s
        }
        func uuid(_ s: String) -> Bool {
            let groups = s.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            return groups.count == 5 && zip(groups, [4, 2, 2, 2, 6]).allSatisfy { lowerHex($0, bytes: $1) }
        }
        switch parts.first {
        case "ibeacon": return parts.count == 4 && uuid(parts[1]) && u16(parts[2]) && u16(parts[3])
        case "altbeacon":
            let hex = parts.count == 4 && parts[1].count >= 2 && parts[1].count % 2 == 0 && lowerHex(parts[1], bytes: parts[1].count / 2)
            return parts.count == 4 && (uuid(parts[1]) || hex) && u16(parts[2]) && u16(parts[3])
        case "eddystone": return parts.count == 3 && lowerHex(parts[1], bytes: 10) && lowerHex(parts[2], bytes: 6)
        case "mac":
            guard parts.count == 2 else { return false }
            let groups = parts[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            return groups.count == 6 && groups.allSatisfy { lowerHex($0, bytes: 1) }
        case "anon": return parts.count == 2 && parts[1].count >= 8 && parts[1].count % 2 == 0 && lowerHex(parts[1], bytes: parts[1].count / 2)
        default: return false
        }
    }
}
