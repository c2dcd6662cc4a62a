/// A minimal JSON document model with ordered object keys, rendered compactly on one line.
///
/// Used for `waymark decode` output so that key order is stable and the module needs no
/// Foundation.
public indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in output order.
    case object([(String, JSONValue)])

    /// `value` as a JSON number, or null when nil.
    public static func int<T: BinaryInteger>(_ value: T?) -> JSONValue {
        value.map { .int(Int($0)) } ?? .null
    }

    /// Lower-case hex of `bytes` as a JSON string.
    public static func hex(_ bytes: some Sequence<UInt8>) -> JSONValue {
        var out: [UInt8] = []
        for b in bytes {
            out.append(hexDigit(b >> 4))
            out.append(hexDigit(b & 0x0F))
        }
        return .string(String(decoding: out, as: UTF8.self))
    }

    /// Compact JSON text (no insignificant white space).
    public var rendered: String {
        var out = ""
        render(into: &out)
        return out
    }

    func render(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if !d.isFinite {
                out += "null"
            } else if d.magnitude < 1e15, d == Double(Int(d)) {
                out += String(Int(d))  // whole numbers without ".0"
            } else {
                out += String(d)
            }
        case .string(let s): Self.renderString(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.render(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                Self.renderString(key, into: &out)
                out += ":"
                value.render(into: &out)
            }
            out += "}"
        }
    }

    static func renderString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let v = UInt8(scalar.value)
                out += "\\u00" + hex2(v)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
