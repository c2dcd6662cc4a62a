import Foundation
import JSONFuzzSupport
import Testing
@testable import WaymarkCore

/// `FlatJSON` (the reader of `waymark replay` input lines) against Foundation's `JSONSerialization`
/// on random flat objects and on random mutations of them: the same documents accepted, the same
/// values read. Nested arrays and objects are outside what FlatJSON reads: it must reject them.
@Suite struct FlatJSONAgreementTests {
    /// Why `ours` and Foundation's `reference` disagree, or nil when they agree.
    static func disagreement(_ doc: [UInt8]) -> String? {
        let reference = FoundationJSON.object(doc)
        do { return compare(doc, try FlatJSON.parseObject(doc), reference, nil) } catch { return compare(doc, nil, reference, error.message) }
    }

    static func compare(_ doc: [UInt8], _ ours: [String: FlatJSON.Value]?, _ reference: [String: Any]?, _ error: String?) -> String? {
        guard let reference else {
            return ours.map { "accepted what Foundation rejects, as \($0)" }
        }
        // (Scanned rather than read off Foundation's result: a nested value may be a duplicate key
        // that a later member replaces.)
        if FoundationJSON.hasNestedValue(doc) {
            guard ours == nil else { return "accepted a nested value" }
            return error?.contains("nested") == true ? nil : "rejected a nested value with '\(error ?? "")'"
        }
        guard let ours else { return "rejected what Foundation accepts: \(error ?? "")" }
        guard Set(ours.keys.map { Array($0.utf8) }) == Set(reference.keys.map { Array($0.utf8) }) else {
            return "keys \(ours.keys.sorted()) but Foundation read \(reference.keys.sorted())"
        }
        for (key, value) in ours {
            let ref = reference[key]!
            let same: Bool
            switch value {
            case .string(let s): same = FoundationJSON.stringBytes(ref) == Array(s.utf8)
            case .number(let d): same = FoundationJSON.sameNumber(d, ref)
            case .bool(let b): same = FoundationJSON.isBool(ref) && (ref as! NSNumber).boolValue == b
            case .null: same = ref is NSNull
            }
            if !same { return "'\(key)' read as \(value), Foundation read \(ref)" }
        }
        return nil
    }

    @Test("FlatJSON agrees with JSONSerialization on 30,000 random and mutated flat objects")
    func fuzz() {
        var fuzz = JSONFuzz(seed: 21)
        var problems: [String] = []
        var accepted = 0
        for round in 0..<30_000 {
            let members = (0..<fuzz.int(0...6)).map { _ in (key: fuzz.string(), value: fuzz.chance(0.05) ? fuzz.value() : fuzz.scalar()) }
            var doc = Array((fuzz.space() + fuzz.object(members) + fuzz.space()).utf8)
            if fuzz.chance(0.7) { doc = fuzz.mutate(doc) }
            if FoundationJSON.object(doc) != nil { accepted += 1 }
            if let why = Self.disagreement(doc), problems.count < 10 {
                problems.append("#\(round) \(FoundationJSON.show(doc)): \(why)")
            }
        }
        #expect(problems.isEmpty, "FlatJSON and JSONSerialization disagree:\n\(problems.joined(separator: "\n"))")
        // The corpus must exercise both sides, or the test proves nothing.
        #expect(accepted > 5_000 && accepted < 25_000, "Foundation accepted \(accepted) of 30000 documents")
    }

    @Test("FlatJSON agrees with JSONSerialization on the edge cases of RFC 8259", arguments: [
        #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":-}"#, #"{"a":1e}"#, #"{"a":1e+}"#, #"{"a":--1}"#,
        #"{"a":1e400}"#, #"{"a":-1e400}"#, #"{"a":-1e-400}"#, #"{"a":1.5e308}"#, #"{"a":4.9e-324}"#, #"{"a":-0}"#,
        #"{"a":1,"a":2}"#, "{\"a\":\"x\u{01}y\"}", "{\"a\":\"x\ty\"}", #"{"a":"\ud83d\ude00"}"#, #"{"a":"\ud83d"}"#,
        #"{"a":"\ude00"}"#, #"{"a":"\ud83d\u0041"}"#, #"{"a":"\u00e9"}"#, #"{"a":"\u+0e9"}"#, #"{"a":"\u00g9"}"#,
        #"{"a":"\x41"}"#, #"{"a":1,}"#, #"{,}"#, #"{"a":tru}"#, #"{"a":truex}"#, #"{"a":nul}"#, #"{"a":1}x"#,
        "{\"a\":1}\u{0B}", " {\"a\":1}\n", #"{"a":[1]}"#, #"{"a":{}}"#, #"{}"#, #"[]"#, #"{"a" 1}"#, #"{"a":1"b":2}"#,
        #"{"a":"x"#, #"{"a":"x\"}"#, #"{1:2}"#,
    ])
    func edgeCases(_ text: String) {
        let doc = Array(text.utf8)
        let why = Self.disagreement(doc)
        #expect(why == nil, "\(FoundationJSON.show(doc)): \(why ?? "")")
    }

    @Test("FlatJSON rejects invalid UTF-8 in a string, as Foundation does")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0xFF], [0xC3], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80]] {
            let doc = Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8)
            let why = Self.disagreement(doc)
            #expect(why == nil, "\(FoundationJSON.show(doc)): \(why ?? "")")
        }
    }
}
