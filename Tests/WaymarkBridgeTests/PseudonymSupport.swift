import WaymarkCore
import WaymarkPrivacy

/// The edge's pseudonymizer, for comparing the bridge's pseudonyms with `waymark-edge`'s.
struct WaymarkBridgeTestPseudonyms {
    var inner: Pseudonymizer
    init(secret: String) { inner = Pseudonymizer(secret: secret) }
    mutating func pseudonym(address: [UInt8], time: Double) -> DeviceID {
        inner.pseudonym(address: address.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, time: time)
    }
}
