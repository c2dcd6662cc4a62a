public import WaymarkJSON

extension JSONValue {
    /// Lower-case hex of `bytes` as a JSON string (how `waymark decode` writes raw bytes).
    public static func hex(_ bytes: some Sequence<UInt8>) -> JSONValue {
        var out: [UInt8] = []
        for b in bytes {
            out.append(hexDigit(b >> 4))
            out.append(hexDigit(b & 0x0F))
        }
        return .string(String(decoding: out, as: UTF8.self))
    }
}
