/// A small JSON document with ordered object members, rendered compactly on one line (used for
/// output whose key order must be stable, such as `waymark decode`).
public indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    /// Written as the shortest decimal that reads back the same; whole numbers below 10^15 without
    /// a fraction; `null` when not finite.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in output order.
    case object([(String, JSONValue)])

    /// `value` as a JSON number, or null when nil.
    public static func int<T: BinaryInteger>(_ value: T?) -> JSONValue {
        value.map { .int(Int($0)) } ?? .null
    }

    /// Compact JSON text (no insignificant white space).
    public var rendered: String {
        var out: [UInt8] = []
        render(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact JSON text.
    public func render(into out: inout [UInt8]) {
        switch self {
        case .null: JSONWriter.appendRaw("null", to: &out)
        case .bool(let b): JSONWriter.appendRaw(b ? "true" : "false", to: &out)
        case .int(let i): JSONWriter.appendInteger(i, to: &out)
        case .double(let d): JSONWriter.appendDouble(d, to: &out)
        case .string(let s): JSONWriter.appendString(s, to: &out)
        case .array(let items):
            out.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(0x2C) }
                item.render(into: &out)
            }
            out.append(0x5D)
        case .object(let members):
            out.append(0x7B)
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(0x2C) }
                JSONWriter.appendString(key, to: &out)
                out.append(0x3A)
                value.render(into: &out)
            }
            out.append(0x7D)
        }
    }
}
