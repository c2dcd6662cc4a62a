import Foundation

/// A small deterministic generator (SplitMix64), so that a fuzz run is the same on every machine.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random JSON text and random mutations of it, for agreement tests of WaymarkJSON (and of the
/// aggregator's batch decoder over it) against Foundation's `JSONSerialization`.
public struct JSONFuzz {
    public var rng: SplitMix64

    public init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    public mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// Insignificant white space between tokens: mostly none.
    public mutating func space() -> String {
        chance(0.8) ? "" : pick([" ", "  ", "\n", "\t", "\r\n", " \n\t "])
    }

    /// A JSON number: integers, decimals and exponents of many lengths, and the shapes the wire
    /// formats use (Unix times with fractions, dBm).
    public mutating func number() -> String {
        switch int(0...9) {
        case 0: return String(Double(int(1_500_000_000...1_900_000_000)) + Double(int(0...999_999)) / 1e6)
        case 1: return String(-int(20...110))
        case 2: return pick(["0", "-0", "0.0", "-0.0", "1e308", "-1e-320", "5e-324", "0.1", "9007199254740993",
                             "123456789012345678", "1E+2", "2.5e-3", "1700000000.0000001", "0e5", "-0.0e0"])
        default:
            var s = chance(0.3) ? "-" : ""
            if chance(0.2) { s += "0" } else {
                s += String(int(1...9))
                for _ in 0..<int(0...(chance(0.1) ? 19 : 9)) { s += String(int(0...9)) }
            }
            if chance(0.5) {
                s += "."
                for _ in 0..<int(1...(chance(0.1) ? 20 : 6)) { s += String(int(0...9)) }
            }
            if chance(0.2) {
                s += pick(["e", "E"]) + pick(["", "+", "-"])
                for _ in 0..<int(1...(chance(0.1) ? 3 : 2)) { s += String(int(0...9)) }
            }
            return s
        }
    }

    /// A JSON string literal (with its quotes): ASCII, escapes (including surrogate pairs) and
    /// non-ASCII UTF-8.
    public mutating func string() -> String {
        var s = "\""
        for _ in 0..<int(0...(chance(0.1) ? 40 : 10)) {
            switch int(0...19) {
            case 0: s += pick(["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"])
            case 1: s += pick(["\\u00e9", "\\u0041", "\\u20AC", "\\ud83d\\ude00", "\\u0000", "\\u001F", "\\uFFFF"])
            case 2: s += pick(["é", "€", "😀", "ß", "\u{7F}", "\u{2028}"])
            default: s += String(UnicodeScalar(UInt8(int(0x20...0x7E)))).replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"")
            }
        }
        return s + "\""
    }

    /// A scalar: string, number, true, false or null.
    public mutating func scalar() -> String {
        switch int(0...9) {
        case 0...3: return string()
        case 4...7: return number()
        case 8: return pick(["true", "false"])
        default: return "null"
        }
    }

    /// Any JSON value, nested at most `depth` deep.
    public mutating func value(depth: Int = 3) -> String {
        guard depth > 0, chance(0.3) else { return scalar() }
        if chance(0.5) {
            let items = (0..<int(0...4)).map { _ in space() + value(depth: depth - 1) + space() }
            return "[" + items.joined(separator: ",") + "]"
        }
        return object((0..<int(0...4)).map { _ in (string(), value(depth: depth - 1)) })
    }

    /// An object of the given members (key and value as JSON text), with random white space.
    public mutating func object(_ members: [(key: String, value: String)]) -> String {
        let parts = members.map { m in space() + m.key + space() + ":" + space() + m.value + space() }
        return "{" + parts.joined(separator: ",") + (members.isEmpty ? space() : "") + "}"
    }

    /// Bytes that make a mutation interesting for a JSON reader.
    static let interesting: [UInt8] = Array("{}[],:\"\\ \n0019.-+eEtfnul".utf8) + [0x00, 0x01, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]

    /// One to three random edits: insert, delete, replace, truncate, duplicate a slice, swap.
    public mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var b = input
        for _ in 0..<int(1...3) {
            guard !b.isEmpty else { return b }
            let at = int(0...(b.count - 1))
            switch int(0...6) {
            case 0, 1: b.insert(pick(Self.interesting), at: at)
            case 2: b.remove(at: at)
            case 3, 4: b[at] = pick(Self.interesting)
            case 5: b.removeLast(int(1...min(8, b.count)))
            default:
                let end = min(b.count, at + int(1...6))
                b.insert(contentsOf: Array(b[at..<end]), at: end)
            }
        }
        return b
    }
}

/// Foundation's reading of a JSON document, the reference of the agreement tests.
public enum FoundationJSON {
    /// The document's top-level object, or nil when `JSONSerialization` rejects it or it is not an
    /// object. Foundation also accepts two things RFC 8259 does not: a comma before `]` or `}` and a
    /// leading byte-order mark; and it checks that a number fits in a Double only for the values it
    /// keeps (`{"a":1e400,"a":1}` passes). Those count as rejected here: our readers follow the RFC
    /// and reject every number out of Double's range.
    public static func object(_ bytes: [UInt8]) -> [String: Any]? {
        guard !(bytes.starts(with: [0xEF, 0xBB, 0xBF])), !hasTrailingComma(bytes), !hasOutOfRangeNumber(bytes) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    /// A number token outside strings that Double cannot hold (such as `1e400`).
    public static func hasOutOfRangeNumber(_ b: [UInt8]) -> Bool {
        func isNumberByte(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x2B || c == 0x2E || c == 0x65 || c == 0x45 }
        var i = 0, inString = false
        while i < b.count {
            let c = b[i]
            if inString {
                if c == 0x5C { i += 2; continue }
                if c == 0x22 { inString = false }
                i += 1
            } else if c == 0x22 {
                inString = true
                i += 1
            } else if (c >= 0x30 && c <= 0x39) || c == 0x2D {
                let start = i
                while i < b.count, isNumberByte(b[i]) { i += 1 }
                if let d = Double(String(decoding: b[start..<i], as: UTF8.self)), !d.isFinite { return true }
            } else {
                i += 1
            }
        }
        return false
    }

    /// A comma followed (after white space) by `]` or `}`, outside strings.
    public static func hasTrailingComma(_ b: [UInt8]) -> Bool {
        var i = 0, inString = false
        while i < b.count {
            let c = b[i]
            if inString {
                if c == 0x5C { i += 2; continue }
                if c == 0x22 { inString = false }
            } else if c == 0x22 {
                inString = true
            } else if c == 0x2C {
                var j = i + 1
                while j < b.count, b[j] == 0x20 || b[j] == 0x0A || b[j] == 0x0D || b[j] == 0x09 { j += 1 }
                if j < b.count, b[j] == 0x5D || b[j] == 0x7D { return true }
            }
            i += 1
        }
        return false
    }

    /// True for Foundation's booleans (on Linux an NSNumber of a private class, so `is Bool` does
    /// not tell them from the numbers 0 and 1).
    public static func isBool(_ value: Any) -> Bool {
        guard let n = value as? NSNumber else { return false }
        return String(describing: type(of: n)).contains("Boolean")
    }

    /// Whether `ours` is the number Foundation read, exactly. Numbers Foundation keeps as decimals
    /// (beyond 64-bit integers) convert to Double inexactly through `doubleValue`, so their exact
    /// decimal text is converted instead.
    public static func sameNumber(_ ours: Double, _ value: Any) -> Bool {
        guard let n = value as? NSNumber, !isBool(value) else { return false }
        return ours == n.doubleValue || ours == Double(n.stringValue)
    }

    /// True when the object `b` holds an array or object as a member value (an opening bracket or
    /// brace outside strings after the first brace).
    public static func hasNestedValue(_ b: [UInt8]) -> Bool {
        var i = 0, inString = false, braces = 0
        while i < b.count {
            let c = b[i]
            if inString {
                if c == 0x5C { i += 2; continue }
                if c == 0x22 { inString = false }
            } else if c == 0x22 {
                inString = true
            } else if c == 0x7B || c == 0x5B {
                braces += 1
                if braces > 1 { return true }
            }
            i += 1
        }
        return false
    }

    /// The UTF-8 bytes of a Foundation string (compared as bytes: `==` on String would equate
    /// canonically equivalent texts).
    public static func stringBytes(_ value: Any) -> [UInt8]? { (value as? String).map { Array($0.utf8) } }

    /// The document for a failure message: printable ASCII as is, every other byte as `\xNN`.
    public static func show(_ bytes: [UInt8]) -> String {
        bytes.map { b in
            (0x20...0x7E).contains(b) ? String(UnicodeScalar(b)) : "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
        }.joined()
    }
}
