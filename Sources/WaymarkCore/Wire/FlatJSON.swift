/// A minimal reader for one flat JSON object (string, number, boolean and null values), enough for
/// the replay JSONL lines; nested values are reported as unsupported. Strict RFC 8259 otherwise
/// (numbers, escapes, surrogate pairs, UTF-8, no control characters): `FlatJSONAgreementTests`
/// fuzzes it against Foundation's `JSONSerialization`.
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
        func hex4() throws(ReplayInputError) -> UInt32 {
            guard i + 4 < b.count else { throw fail("\\u escape needs four hex digits") }
            var v: UInt32 = 0
            for k in 1...4 {
                let c = b[i + k]
                let d: UInt8
                switch c {
                case 0x30...0x39: d = c - 0x30
                case 0x41...0x46: d = c - 0x41 + 10
                case 0x61...0x66: d = c - 0x61 + 10
                default: throw fail("\\u escape needs four hex digits")
                }
                v = v << 4 | UInt32(d)
            }
            i += 4
            return v
        }
        func readString() throws(ReplayInputError) -> String {
            guard i < b.count, b[i] == 0x22 else { throw fail("expected '\"'") }
            i += 1
            var bytes: [UInt8] = []
            var ascii = true
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
                        var v = try hex4()
                        if (0xD800...0xDBFF).contains(v) {
                            // A high surrogate must be followed by an escaped low one: together one scalar.
                            guard i + 2 < b.count, b[i + 1] == 0x5C, b[i + 2] == 0x75 else { throw fail("unpaired surrogate in a \\u escape") }
                            i += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in a \\u escape") }
                            v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(v) else { throw fail("unpaired surrogate in a \\u escape") }
                        bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default: throw fail("bad escape")
                    }
                } else {
                    guard b[i] >= 0x20 else { throw fail("control character in a string (write it as \\u00XX)") }
                    if b[i] >= 0x80 { ascii = false }
                    bytes.append(b[i])
                }
                i += 1
            }
            guard i < b.count else { throw fail("unterminated string") }
            i += 1
            if ascii { return String(decoding: bytes, as: UTF8.self) }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
            return text
        }
        /// A number as RFC 8259 writes it: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
        func readNumber() throws(ReplayInputError) -> Double {
            let start = i
            func digits() -> Int {
                let from = i
                while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 { i += 1 }
                return i - from
            }
            if i < b.count, b[i] == 0x2D { i += 1 }
            let first = i
            let whole = digits()
            guard whole > 0 else { throw fail("bad number (expected a digit)") }
            guard whole == 1 || b[first] != 0x30 else { throw fail("bad number (leading zero)") }
            if i < b.count, b[i] == 0x2E {
                i += 1
                guard digits() > 0 else { throw fail("bad number (expected a digit after '.')") }
            }
            if i < b.count, b[i] == 0x65 || b[i] == 0x45 {
                i += 1
                if i < b.count, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
                guard digits() > 0 else { throw fail("bad number (expected a digit in the exponent)") }
            }
            guard let d = Double(String(decoding: b[start..<i], as: UTF8.self)) else { throw fail("bad number") }
            guard d.isFinite else { throw fail("number out of range") }
            return d
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
                return .number(try readNumber())
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
