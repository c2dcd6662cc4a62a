/// A small, allocation-free reader for the flat JSON objects of JSONL files (one object per
/// line): finds the value of a top-level key as raw bytes, a string or a number. Nested arrays and
/// objects are skipped over, so `monitored`/`journey` lines parse too. Strings with escapes are
/// decoded only for the common escapes; the files this reads carry ids that need none.
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
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { return }
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "\""), let keyEnd = stringEnd(i) else { return nil }
            let key = (i + 1)..<(keyEnd - 1)
            i = skipSpace(keyEnd)
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i = skipSpace(i + 1)
            guard let valueEnd = valueEnd(i) else { return nil }
            members.append(Member(key: key, value: i..<valueEnd))
            i = skipSpace(valueEnd)
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "}") { return }
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

    /// Index just past the closing quote of the string starting at `start`.
    private func stringEnd(_ start: Int) -> Int? {
        var i = start + 1
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\") { i += 2; continue }
            if bytes[i] == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        return nil
    }

    private func valueEnd(_ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""): return stringEnd(start)
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            var depth = 0
            var i = start
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    guard let e = stringEnd(i) else { return nil }
                    i = e
                    continue
                case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
                i += 1
            }
            return nil
        default:
            var i = start
            while i < bytes.count, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "}"),
                  bytes[i] != 0x20, bytes[i] != 0x09 { i += 1 }
            return i > start ? i : nil
        }
    }

    /// The raw value of `key`, or nil when absent.
    func raw(_ key: StaticString) -> UnsafeBufferPointer<UInt8>? {
        key.withUTF8Buffer { k in
            for m in members where m.key.count == k.count {
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

    func string(_ key: StaticString) -> String? {
        stringBytes(key).map { String(decoding: $0, as: UTF8.self) }
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

    /// Parses a JSON number: sign, digits, optional fraction and exponent.
    static func parseNumber(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        var negative = false
        if i < b.count && b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var scale = 0
        var sawDigit = false
        while i < b.count, let d = digit(b[i]) {
            if digits < 19 { mantissa = mantissa * 10 + UInt64(d); digits += mantissa > 0 ? 1 : 0 } else { scale += 1 }
            sawDigit = true
            i += 1
        }
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count, let d = digit(b[i]) {
                if digits < 19 { mantissa = mantissa * 10 + UInt64(d); digits += mantissa > 0 ? 1 : 0; scale -= 1 }
                sawDigit = true
                i += 1
            }
        }
        guard sawDigit else { return nil }
        if i < b.count && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
            i += 1
            var expNegative = false
            if i < b.count && (b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+")) { expNegative = b[i] == UInt8(ascii: "-"); i += 1 }
            var e = 0
            var sawExp = false
            while i < b.count, let d = digit(b[i]) { e = min(e * 10 + d, 9999); sawExp = true; i += 1 }
            guard sawExp else { return nil }
            scale += expNegative ? -e : e
        }
        guard i == b.count else { return nil }
        var value = Double(mantissa)
        if scale < 0 {
            var s = -scale
            while s > 0 { let k = min(s, 22); value /= power10[k]; s -= k }
        } else if scale > 0 {
            var s = scale
            while s > 0 { let k = min(s, 22); value *= power10[k]; s -= k }
        }
        return negative ? -value : value
    }

    @inline(__always)
    private static func digit(_ c: UInt8) -> Int? {
        c >= 0x30 && c <= 0x39 ? Int(c - 0x30) : nil
    }

    private static let power10: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { a, _ in a * 10 } }
}
