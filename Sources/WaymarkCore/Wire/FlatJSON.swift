/// A minimal reader for one flat JSON object (string, number, boolean and null values), enough for
/// the replay JSONL lines; nested values are reported as unsupported.
enum FlatJSON {
    enum Value: Hashable, CustomStringConvertible {
        case string(String), number(Double), bool(Bool), null

        var description: String {
            switch self {
            case .string(let s): "\"\(s)\""
            case .number(let d): "\(d)"
            case .bool(let b): "\(b)"
            case .null: "null"
            }
        }
    }

    static func parseObject(_ b: [UInt8]) throws(ReplayInputError) -> [String: Value] {
        var i = 0
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0D || b[i] == 0x0A { i += 1 } }
        func fail(_ what: String) -> ReplayInputError {
            ReplayInputError("not a JSON object line: \(what) at column \(i + 1)")
        }
        func readString() throws(ReplayInputError) -> String {
            guard i < b.count, b[i] == 0x22 else { throw fail("expected '\"'") }
            i += 1
            var bytes: [UInt8] = []
            while i < b.count, b[i] != 0x22 {
                if b[i] == 0x5C {
                    i += 1
                    guard i < b.count else { break }
                    switch b[i] {
                    case 0x22, 0x5C, 0x2F: bytes.append(b[i])
                    case 0x62: bytes.append(0x08)
                    case 0x66: bytes.append(0x0C)
                    case 0x6E: bytes.append(0x0A)
                    case 0x72: bytes.append(0x0D)
                    case 0x74: bytes.append(0x09)
                    case 0x75:
                        guard i + 4 < b.count, let v = UInt32(String(decoding: b[(i + 1)...(i + 4)], as: UTF8.self), radix: 16),
                              let scalar = Unicode.Scalar(v) else { throw fail("bad \\u escape") }
                        bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
                        i += 4
                    default: throw fail("bad escape")
                    }
                } else {
                    bytes.append(b[i])
                }
                i += 1
            }
            guard i < b.count else { throw fail("unterminated string") }
            i += 1
            return String(decoding: bytes, as: UTF8.self)
        }
        func readValue() throws(ReplayInputError) -> Value {
            guard i < b.count else { throw fail("missing value") }
            switch b[i] {
            case 0x22: return .string(try readString())
            case 0x7B, 0x5B: throw fail("nested objects and arrays are not supported")
            case 0x74, 0x66, 0x6E:
                for (word, value) in [("true", Value.bool(true)), ("false", .bool(false)), ("null", .null)] where b[i...].starts(with: word.utf8) {
                    i += word.utf8.count
                    return value
                }
                throw fail("unknown literal")
            default:
                let start = i
                while i < b.count, b[i] == 0x2D || b[i] == 0x2B || b[i] == 0x2E || b[i] == 0x45 || b[i] == 0x65 || (b[i] >= 0x30 && b[i] <= 0x39) { i += 1 }
                guard i > start, let d = Double(String(decoding: b[start..<i], as: UTF8.self)) else { throw fail("bad number") }
                return .number(d)
            }
        }
        var out: [String: Value] = [:]
        skipSpace()
        guard i < b.count else { throw ReplayInputError("empty line") }
        guard b[i] == 0x7B else { throw fail("expected '{'") }
        i += 1
        skipSpace()
        if i < b.count, b[i] == 0x7D { i += 1 } else {
            while true {
                skipSpace()
                let key = try readString()
                skipSpace()
                guard i < b.count, b[i] == 0x3A else { throw fail("expected ':' after \"\(key)\"") }
                i += 1
                skipSpace()
                out[key] = try readValue()
                skipSpace()
                guard i < b.count else { throw fail("unterminated object") }
                if b[i] == 0x2C { i += 1; continue }
                guard b[i] == 0x7D else { throw fail("expected ',' or '}'") }
                i += 1
                break
            }
        }
        skipSpace()
        guard i == b.count else { throw fail("text after the object") }
        return out
    }
}
