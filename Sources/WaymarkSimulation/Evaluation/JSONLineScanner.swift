#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small reader for the JSON objects of JSONL files (one object per line): checks the line as
/// JSON (RFC 8259, as `JSONSerialization` reads it: `JSONLineScannerAgreementTests`) and finds the
/// value of a top-level key as raw bytes, a string or a number. Nested arrays and objects are
/// checked and skipped over, so `monitored`/`journey` lines parse too. Keys are compared as
/// written (a key spelled with an escape is not found by its plain name); of a key given twice,
/// the last value counts.
public struct JSONLineScanner {
    /// A top-level member: key and value as ranges into the line.
    struct Member { var key: Range<Int>; var value: Range<Int> }

    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var members: [Member] = []

    /// Scans one line; nil when it is not a JSON object.
    init?(line: UnsafeBufferPointer<UInt8>, reuse: [Member] = []) {
        bytes = line
        members = reuse
        members.removeAll(keepingCapacity: true)
        var i = skipSpace(0)
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
        i = skipSpace(i + 1)
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
            guard skipSpace(i + 1) == bytes.count else { return nil }
            return
        }
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "\""), let keyEnd = stringEnd(i) else { return nil }
            let key = (i + 1)..<(keyEnd - 1)
            i = skipSpace(keyEnd)
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i = skipSpace(i + 1)
            guard let valueEnd = valueEnd(i, depth: 0) else { return nil }
            members.append(Member(key: key, value: i..<valueEnd))
            i = skipSpace(valueEnd)
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "}") {
                guard skipSpace(i + 1) == bytes.count else { return nil }
                return
            }
            guard bytes[i] == UInt8(ascii: ",") else { return nil }
            i = skipSpace(i + 1)
        }
        return nil
    }

    private func skipSpace(_ start: Int) -> Int {
        var i = start
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0D || bytes[i] == 0x0A { i += 1 }
        return i
    }

    /// Index just past the closing quote of the string starting at `start`; nil when the string is
    /// not valid JSON (bad escape, unpaired surrogate, control character, invalid UTF-8).
    private func stringEnd(_ start: Int) -> Int? {
        var i = start + 1
        var high: UInt8 = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                if high >= 0x80, String(validating: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<i]), as: UTF8.self) == nil {
                    return nil
                }
                return i + 1
            }
            guard b >= 0x20 else { return nil }
            high |= b
            if b == UInt8(ascii: "\\") {
                guard i + 1 < bytes.count else { return nil }
                switch bytes[i + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 2
                case UInt8(ascii: "u"):
                    guard let unit = hex4(i + 2) else { return nil }
                    i += 6
                    if (0xD800...0xDBFF).contains(unit) {
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u"),
                              let low = hex4(i + 2), (0xDC00...0xDFFF).contains(low) else { return nil }
                        i += 6
                    } else if (0xDC00...0xDFFF).contains(unit) {
                        return nil
                    }
                default:
                    return nil
                }
                continue
            }
            i += 1
        }
        return nil
    }

    /// The value of the four hex digits at `at`, or nil.
    private func hex4(_ at: Int) -> UInt32? {
        guard at + 4 <= bytes.count else { return nil }
        var v: UInt32 = 0
        for k in at..<(at + 4) {
            let c = bytes[k]
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x41...0x46: d = c - 0x41 + 10
            case 0x61...0x66: d = c - 0x61 + 10
            default: return nil
            }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    /// Index just past the JSON value at `start`, or nil when there is none or it is not valid.
    private func valueEnd(_ start: Int, depth: Int) -> Int? {
        guard start < bytes.count, depth < 64 else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""): return stringEnd(start)
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            let isObject = bytes[start] == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            var i = skipSpace(start + 1)
            if i < bytes.count && bytes[i] == close { return i + 1 }
            while i < bytes.count {
                if isObject {
                    guard bytes[i] == UInt8(ascii: "\""), let keyEnd = stringEnd(i) else { return nil }
                    i = skipSpace(keyEnd)
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
                    i = skipSpace(i + 1)
                }
                guard let end = valueEnd(i, depth: depth + 1) else { return nil }
                i = skipSpace(end)
                guard i < bytes.count else { return nil }
                if bytes[i] == close { return i + 1 }
                guard bytes[i] == UInt8(ascii: ",") else { return nil }
                i = skipSpace(i + 1)
            }
            return nil
        case UInt8(ascii: "t"): return literalEnd(start, "true")
        case UInt8(ascii: "f"): return literalEnd(start, "false")
        case UInt8(ascii: "n"): return literalEnd(start, "null")
        default: return numberEnd(start)
        }
    }

    private func literalEnd(_ start: Int, _ word: StaticString) -> Int? {
        let n = word.utf8CodeUnitCount
        guard start + n <= bytes.count else { return nil }
        for k in 0..<n where bytes[start + k] != word.utf8Start[k] { return nil }
        return start + n
    }

    /// Index just past the number at `start` (`-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`),
    /// or nil when it is not one or does not fit in a Double.
    private func numberEnd(_ start: Int) -> Int? {
        var i = start
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let integer = i
        while i < bytes.count, bytes[i] &- 0x30 < 10 { i += 1 }
        guard i > integer, i == integer + 1 || bytes[integer] != UInt8(ascii: "0") else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fraction = i
            while i < bytes.count, bytes[i] &- 0x30 < 10 { i += 1 }
            guard i > fraction else { return nil }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let exponent = i
            while i < bytes.count, bytes[i] &- 0x30 < 10 { i += 1 }
            guard i > exponent else { return nil }
            // Only an exponent can take a number out of Double's range (309 integer digits do not fit in a line we read).
            guard Self.parseNumber(UnsafeBufferPointer(rebasing: bytes[start..<i]))?.isFinite == true else { return nil }
        }
        return i
    }

    /// The raw value of `key` (the last one when the key is given twice), or nil when absent.
    func raw(_ key: StaticString) -> UnsafeBufferPointer<UInt8>? {
        key.withUTF8Buffer { k in
            for m in members.reversed() where m.key.count == k.count {
                var same = true
                for j in 0..<k.count where bytes[m.key.lowerBound + j] != k[j] { same = false; break }
                if same { return UnsafeBufferPointer(rebasing: bytes[m.value]) }
            }
            return nil
        }
    }

    /// True when `key` is present with the value `null`.
    func isNull(_ key: StaticString) -> Bool {
        guard let r = raw(key) else { return false }
        return r.count == 4 && r[0] == UInt8(ascii: "n")
    }

    /// The contents of a string value without its quotes (escapes left as written), or nil.
    func stringBytes(_ key: StaticString) -> UnsafeBufferPointer<UInt8>? {
        guard let r = raw(key), r.count >= 2, r[0] == UInt8(ascii: "\"") else { return nil }
        return UnsafeBufferPointer(rebasing: r[1..<(r.count - 1)])
    }

    /// A string value with its escapes decoded, or nil.
    func string(_ key: StaticString) -> String? {
        guard let s = stringBytes(key) else { return nil }
        guard s.contains(UInt8(ascii: "\\")) else { return String(decoding: s, as: UTF8.self) }
        return Self.unescape(s)
    }

    /// Decodes the escapes of a string that `stringEnd` checked.
    static func unescape(_ s: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        func hex(_ at: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in at..<(at + 4) {
                let c = s[k]
                v = v << 4 | UInt32(c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10)
            }
            return v
        }
        while i < s.count {
            guard s[i] == UInt8(ascii: "\\") else { out.append(s[i]); i += 1; continue }
            switch s[i + 1] {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var v = hex(i + 2)
                if (0xD800...0xDBFF).contains(v) {
                    v = 0x10000 + ((v - 0xD800) << 10) + (hex(i + 8) - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(v)!)).utf8))
                i += 4
            default: out.append(s[i + 1])
            }
            i += 2
        }
        return String(decoding: out, as: UTF8.self)
    }

    func number(_ key: StaticString) -> Double? {
        raw(key).flatMap(Self.parseNumber)
    }

    func bool(_ key: StaticString) -> Bool? {
        guard let r = raw(key) else { return nil }
        if r.elementsEqual("true".utf8) { return true }
        if r.elementsEqual("false".utf8) { return false }
        return nil
    }

    /// Parses a JSON number, correctly rounded: a decimal whose digits fit in 2^53 is an exact
    /// integer divided by an exact power of ten (one rounding); anything else goes to strtod.
    static func parseNumber(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        var negative = false
        if i < b.count && b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fraction = 0
        let integer = i
        while i < b.count, b[i] &- 0x30 < 10 {
            if digits < 19 { mantissa = mantissa * 10 + UInt64(b[i] &- 0x30) }
            digits += 1
            i += 1
        }
        guard i > integer, i == integer + 1 || b[integer] != UInt8(ascii: "0") else { return nil }
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count, b[i] &- 0x30 < 10 {
                if digits < 19 { mantissa = mantissa * 10 + UInt64(b[i] &- 0x30) }
                digits += 1
                fraction += 1
                i += 1
            }
            guard fraction > 0 else { return nil }
        }
        if i == b.count && digits < 19 && mantissa <= 1 << 53 && fraction <= 22 {
            let v = Double(mantissa) / power10[fraction]
            return negative ? -v : v
        }
        // An exponent, or more digits than the fast path takes: strtod, after checking the grammar.
        if i < b.count && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
            i += 1
            if i < b.count && (b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+")) { i += 1 }
            let exponent = i
            while i < b.count, b[i] &- 0x30 < 10 { i += 1 }
            guard i > exponent else { return nil }
        }
        guard i == b.count, b.count < 400 else { return nil }
        let value = withUnsafeTemporaryAllocation(of: CChar.self, capacity: b.count + 1) { buf in
            for k in 0..<b.count { buf[k] = CChar(bitPattern: b[k]) }
            buf[b.count] = 0
            return strtod(buf.baseAddress!, nil)
        }
        return value.isFinite ? value : nil
    }

    private static let power10: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { a, _ in a * 10 } }
}
