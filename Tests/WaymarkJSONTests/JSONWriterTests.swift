import Foundation
import JSONFuzzSupport
import Testing
import WaymarkJSON

/// What `JSONWriter` and `JSONValue` write is JSON that Foundation's `JSONSerialization` and our
/// own reader read back to the values written.
@Suite struct JSONWriterTests {
    /// The single value of `[text]` as Foundation reads it.
    static func foundationValue(_ text: [UInt8]) -> Any? {
        ((try? JSONSerialization.jsonObject(with: Data([0x5B] + text + [0x5D]))) as? [Any])?.first
    }

    /// The value of `text` as our reader reads it.
    static func ourValue(_ text: [UInt8]) -> JSONAgreementTests.Tree? {
        text.withUnsafeBufferPointer { buffer in
            var r = JSONReader(buffer)
            guard let tree = try? JSONAgreementTests.tree(&r), (try? r.expectEnd()) != nil else { return nil }
            return tree
        }
    }

    @Test("strings of any scalars (quotes, backslashes, control characters, DEL, non-ASCII) read back the same")
    func strings() {
        var fuzz = JSONFuzz(seed: 3)
        let pool: [Unicode.Scalar] = ["\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{C}", "\u{1F}", "\u{7F}", "é", "€",
                                      "😀", "\u{2028}", "\u{FFFF}", "a", "Z", " "]
        var problems: [String] = []
        for _ in 0..<5_000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<fuzz.int(0...12) {
                s.append(fuzz.chance(0.5) ? fuzz.pick(pool) : Unicode.Scalar(UInt8(fuzz.int(0...127))))
            }
            let text = String(s)
            var out: [UInt8] = []
            JSONWriter.appendString(text, to: &out)
            let reference = Self.foundationValue(out).flatMap(FoundationJSON.stringBytes)
            guard case .string(let ours)? = Self.ourValue(out), ours == Array(text.utf8), reference == Array(text.utf8) else {
                if problems.count < 10 { problems.append("\(text.debugDescription) written as \(FoundationJSON.show(out))") }
                continue
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("escapes: the two-character forms where they exist, \\u00XX for other control characters and DEL")
    func escapes() {
        var out: [UInt8] = []
        JSONWriter.appendString("a\"b\\c\n\r\t\u{1}\u{8}\u{7F}é/", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""a\"b\\c\n\r\t\u0001\u0008\u007Fé/""#)
    }

    @Test("doubles are written as the shortest decimal that reads back the same; integers exactly")
    func numbers() {
        var rng = SplitMix64(seed: 4)
        var values: [Double] = [0, -0.0, 1, -3, 22.5, 0.1, 1e15, 1e-7, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1780304400.125, 999_999_999_999_999]
        for _ in 0..<5_000 {
            let bits = rng.next()
            let d = Double(bitPattern: bits)
            values.append(d.isFinite ? d : Double(bits >> 11))
            values.append(Double(Int64(bitPattern: rng.next()) >> Int(rng.next() % 63)))
        }
        var problems: [String] = []
        for v in values {
            var out: [UInt8] = []
            JSONWriter.appendDouble(v, to: &out)
            let reference = Self.foundationValue(out)
            guard case .number(let ours)? = Self.ourValue(out), ours == v, let reference, FoundationJSON.sameNumber(v, reference) else {
                if problems.count < 10 { problems.append("\(v) written as \(FoundationJSON.show(out))") }
                continue
            }
        }
        for i in [0, -1, 7, Int.max, Int.min, 1_780_304_400] {
            var out: [UInt8] = []
            JSONWriter.appendInteger(i, to: &out)
            if String(decoding: out, as: UTF8.self) != String(i) || (Self.foundationValue(out) as? NSNumber)?.int64Value != Int64(i) {
                problems.append("\(i) written as \(FoundationJSON.show(out))")
            }
        }
        var special: [UInt8] = []
        JSONWriter.appendDouble(.nan, to: &special)
        JSONWriter.appendDouble(-3, to: &special)
        #expect(String(decoding: special, as: UTF8.self) == "null-3")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("milliseconds: exactly three decimals, rounded", arguments: [
        (1_780_304_400.125, "1780304400.125"), (1_780_304_400.0456, "1780304400.046"), (0, "0.000"), (-0.5, "-0.500"),
        (-1_780_304_400.0004, "-1780304400.000"), (12.9996, "13.000"),
    ])
    func milliseconds(_ value: Double, _ text: String) {
        var out: [UInt8] = []
        JSONWriter.appendMilli(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == text)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 24)
        defer { p.deallocate() }
        let n = JSONWriter.writeMilli(value, at: p)
        #expect(Array(UnsafeBufferPointer(start: p, count: n)) == out)
    }

    /// The values a `JSONValue` holds, as the reader should read them back.
    static func tree(_ value: JSONValue) -> JSONAgreementTests.Tree {
        switch value {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .number(Double(i))
        case .double(let d): d.isFinite ? .number(d) : .null
        case .string(let s): .string(Array(s.utf8))
        case .array(let items): .array(items.map(tree))
        case .object(let members): .object(members.map { (Array($0.0.utf8), tree($0.1)) })
        }
    }

    @Test("JSONValue renders random documents that Foundation reads to the same values, keys in order")
    func documents() {
        var fuzz = JSONFuzz(seed: 5)
        func value(_ depth: Int) -> JSONValue {
            switch fuzz.int(0...(depth > 0 ? 7 : 5)) {
            case 0: return .null
            case 1: return .bool(fuzz.chance(0.5))
            case 2: return .int(fuzz.int(-1_000_000...1_000_000))
            case 3: return .double(Double(fuzz.int(-1_000_000...1_000_000)) / Double(fuzz.pick([1, 3, 1000, 7e9])))
            case 4, 5: return .string(fuzz.pick(["", "gw-1", "a\"b", "é\u{1}\n", "mac:aa-bb-cc-dd-ee-ff", "\\"]))
            case 6: return .array((0..<fuzz.int(0...3)).map { _ in value(depth - 1) })
            default: return .object((0..<fuzz.int(0...3)).map { i in ("k\(i)", value(depth - 1)) })
            }
        }
        var problems: [String] = []
        for _ in 0..<2_000 {
            let doc = JSONValue.object([("root", value(3))])
            let text = Array(doc.rendered.utf8)
            guard let reference = FoundationJSON.object(text) else {
                problems.append("not JSON: \(FoundationJSON.show(text))")
                continue
            }
            if let why = JSONAgreementTests.difference(Self.tree(doc), reference) {
                problems.append("Foundation read \(why) in \(FoundationJSON.show(text))")
            }
            guard case .success(let ours) = JSONAgreementTests.read(text), JSONAgreementTests.difference(ours, reference) == nil else {
                problems.append("our reader differs on \(FoundationJSON.show(text))")
                continue
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")
    }
}
