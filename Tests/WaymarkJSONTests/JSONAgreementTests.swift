import Foundation
import JSONFuzzSupport
import Testing
import WaymarkJSON

/// `JSONReader`, `skipValue` and `JSONObjectIndex` against Foundation's `JSONSerialization` on
/// random objects (nested values included) and random mutations of them: the same documents
/// accepted, the same values read. This is the agreement test of every JSON reader in the
/// package: the aggregator's batches, `waymark replay` and `waymark evaluate` input and the
/// edge's replay files are all read with this module.
@Suite struct JSONAgreementTests {
    /// A document as our reader reads it, to compare with Foundation's.
    indirect enum Tree {
        case string([UInt8]), number(Double), bool(Bool), null, array([Tree]), object([(key: [UInt8], value: Tree)])
    }

    /// Any value at the reader's position, read with the public reading functions.
    static func tree(_ r: inout JSONReader) throws(JSONError) -> Tree {
        switch r.peek() {
        case 0x22: return .string(Array(try r.readString().value.utf8))
        case 0x7B:
            var object = try r.openObject()
            var members: [(key: [UInt8], value: Tree)] = []
            while try r.next(in: &object) {
                let key = Array(try r.readKey().value.utf8)
                members.append((key, try tree(&r)))
            }
            return .object(members)
        case 0x5B:
            var array = try r.openArray()
            var items: [Tree] = []
            while try r.next(in: &array) { items.append(try tree(&r)) }
            return .array(items)
        case 0x74, 0x66: return .bool(try r.readBool())
        case 0x6E:
            try r.readNull()
            return .null
        default: return .number(try r.readNumber())
        }
    }

    /// The document read as one object and nothing after it, or the reader's error.
    static func read(_ doc: [UInt8]) -> Result<Tree, JSONError> {
        doc.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) -> Tree in
                var r = JSONReader(buffer)
                guard r.peek() == 0x7B else { throw r.error("not an object") }
                let value = try tree(&r)
                try r.expectEnd()
                return value
            }
        }
    }

    /// Why `ours` differs from Foundation's `ref`, or nil.
    static func difference(_ ours: Tree, _ ref: Any) -> String? {
        switch ours {
        case .string(let s): return FoundationJSON.stringBytes(ref) == s ? nil : "string \(String(decoding: s, as: UTF8.self)) vs \(ref)"
        case .number(let d): return FoundationJSON.sameNumber(d, ref) ? nil : "number \(d) vs \(ref)"
        case .bool(let b): return FoundationJSON.isBool(ref) && (ref as! NSNumber).boolValue == b ? nil : "\(b) vs \(ref)"
        case .null: return ref is NSNull ? nil : "null vs \(ref)"
        case .array(let items):
            guard let refItems = ref as? [Any], refItems.count == items.count else { return "array of \(items.count) vs \(ref)" }
            return zip(items, refItems).lazy.compactMap { difference($0, $1) }.first
        case .object(let members):
            guard let refObject = ref as? [String: Any] else { return "object vs \(ref)" }
            var last: [[UInt8]: Tree] = [:]
            for m in members { last[m.key] = m.value }
            guard Set(last.keys) == Set(refObject.keys.map { Array($0.utf8) }) else {
                return "keys \(last.keys.map { String(decoding: $0, as: UTF8.self) }.sorted()) vs \(refObject.keys.sorted())"
            }
            for (key, value) in refObject {
                if let why = difference(last[Array(key.utf8)]!, value) { return "'\(key)': \(why)" }
            }
            return nil
        }
    }

    /// Why the module and Foundation disagree on `doc`, or nil: the reader, `skipValue` and
    /// `JSONObjectIndex` must each accept exactly what Foundation accepts, and the reader must
    /// read the same values.
    static func disagreement(_ doc: [UInt8]) -> String? {
        let reference = FoundationJSON.object(doc)
        let skipped = doc.withUnsafeBufferPointer { buffer in
            var r = JSONReader(buffer)
            return r.peek() == 0x7B && (try? r.skipValue()) != nil && (try? r.expectEnd()) != nil
        }
        let indexed = doc.withUnsafeBufferPointer { (try? JSONObjectIndex($0)) != nil }
        switch (read(doc), reference) {
        case (.success, nil): return "accepted what Foundation rejects"
        case (.failure(let error), _?): return "rejected what Foundation accepts: \(error)"
        case (.failure, nil):
            return skipped || indexed ? "skipValue or JSONObjectIndex accepted what the reader and Foundation reject" : nil
        case (.success(let ours), let reference?):
            guard skipped, indexed else { return "skipValue or JSONObjectIndex rejected what the reader and Foundation accept" }
            return difference(ours, reference)
        }
    }

    @Test("the reader agrees with JSONSerialization on 30,000 random and mutated documents")
    func fuzz() {
        var fuzz = JSONFuzz(seed: 2126)
        var problems: [String] = []
        var accepted = 0
        for round in 0..<30_000 {
            let members = (0..<fuzz.int(0...6)).map { _ in (key: fuzz.string(), value: fuzz.chance(0.3) ? fuzz.value() : fuzz.scalar()) }
            var doc = Array((fuzz.space() + fuzz.object(members) + fuzz.space()).utf8)
            if fuzz.chance(0.7) { doc = fuzz.mutate(doc) }
            if FoundationJSON.object(doc) != nil { accepted += 1 }
            if let why = Self.disagreement(doc), problems.count < 10 {
                problems.append("#\(round) \(FoundationJSON.show(doc)): \(why)")
            }
        }
        #expect(problems.isEmpty, "WaymarkJSON and JSONSerialization disagree:\n\(problems.joined(separator: "\n"))")
        // The corpus must exercise both sides, or the test proves nothing.
        #expect(accepted > 5_000 && accepted < 25_000, "Foundation accepted \(accepted) of 30000 documents")
    }

    static let indexKeys: [StaticString] = ["t", "type", "device", "region", "entered", "exited", "inferred", "monitored", "rssi", "\u{e9}"]

    /// Why `JSONObjectIndex`'s lookups and Foundation disagree on an accepted `doc`, or nil.
    static func indexDisagreement(_ doc: [UInt8]) -> String? {
        guard let reference = FoundationJSON.object(doc) else { return nil }
        return doc.withUnsafeBufferPointer { line -> String? in
            guard let index = try? JSONObjectIndex(line) else { return "rejected what Foundation accepts" }
            for key in indexKeys {
                let name = key.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
                guard let ref = reference[name] else {
                    if index.raw(key) != nil { return "found '\(name)', which Foundation did not" }
                    continue
                }
                let same: Bool
                if let s = FoundationJSON.stringBytes(ref) {
                    same = index.string(key).map { Array($0.utf8) } == s
                } else if ref is NSNull {
                    same = index.isNull(key)
                } else if FoundationJSON.isBool(ref) {
                    same = index.bool(key) == (ref as! NSNumber).boolValue
                } else if ref is NSNumber {
                    same = index.number(key).map { FoundationJSON.sameNumber($0, ref) } ?? false
                } else {
                    same = index.raw(key).map { $0.first == UInt8(ascii: "[") || $0.first == UInt8(ascii: "{") } ?? false
                }
                if !same {
                    let raw = index.raw(key).map { String(decoding: $0, as: UTF8.self) } ?? "nothing"
                    return "'\(name)' read as \(raw), Foundation read \(ref)"
                }
            }
            return nil
        }
    }

    @Test("JSONObjectIndex looks up the values JSONSerialization reads, on 30,000 random and mutated lines")
    func indexFuzz() {
        var fuzz = JSONFuzz(seed: 2112)
        var problems: [String] = []
        var accepted = 0
        for round in 0..<30_000 {
            let members = (0..<fuzz.int(0...6)).map { _ in
                let key = Self.indexKeys[fuzz.int(0...(Self.indexKeys.count - 1))].withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
                return (key: "\"\(key)\"", value: fuzz.chance(0.15) ? fuzz.value() : fuzz.scalar())
            }
            var doc = Array((fuzz.space() + fuzz.object(members) + fuzz.space()).utf8)
            if fuzz.chance(0.7) { doc = fuzz.mutate(doc) }
            if FoundationJSON.object(doc) != nil { accepted += 1 }
            if let why = Self.disagreement(doc) ?? Self.indexDisagreement(doc), problems.count < 10 {
                problems.append("#\(round) \(FoundationJSON.show(doc)): \(why)")
            }
        }
        #expect(problems.isEmpty, "JSONObjectIndex and JSONSerialization disagree:\n\(problems.joined(separator: "\n"))")
        #expect(accepted > 5_000 && accepted < 25_000, "Foundation accepted \(accepted) of 30000 lines")
    }

    @Test("the reader agrees with JSONSerialization on the edge cases of RFC 8259", arguments: [
        // numbers
        #"{"a":01}"#, #"{"a":-01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":-}"#, #"{"a":1e}"#, #"{"a":1e+}"#,
        #"{"a":1E+}"#, #"{"a":--1}"#, #"{"a":1.2.3}"#, #"{"a":1-2}"#, #"{"a":1e5e5}"#, #"{"a":0x10}"#, #"{"a":1e400}"#,
        #"{"a":-1e400}"#, #"{"a":-1e-400}"#, #"{"a":1.5e308}"#, #"{"a":4.9e-324}"#, #"{"a":-0}"#, #"{"a":0.1}"#,
        #"{"a":1700000000.1234567}"#, #"{"a":9007199254740993}"#, #"{"a":12345678901234567890123}"#, #"{"a":1E22}"#,
        #"{"a":123456789012345678e-5}"#, #"{"a":0.000000000000000000000000001}"#,
        // strings
        #"{"a":"\ud83d\ude00"}"#, #"{"a":"\ud83d"}"#, #"{"a":"\ude00"}"#, #"{"a":"\ud83d\u0041"}"#, #"{"a":"\u00e9"}"#,
        #"{"a":"\u+0e9"}"#, #"{"a":"\u00g9"}"#, #"{"a":"\u12"}"#, #"{"a":"\x41"}"#, #"{"a":"a\"b\\c\/d\n"}"#,
        "{\"a\":\"x\u{01}y\"}", "{\"a\":\"x\ty\"}", #"{"a":"x"#, #"{"a":"x\"}"#, #"{"\u0061":1,"a":2}"#,
        // literals, structure, nesting
        #"{"a":tru}"#, #"{"a":truex}"#, #"{"a":nul}"#, #"{"a":falsey}"#, #"{"a":truefalse}"#, #"{"a":1,"a":2}"#,
        #"{"a":1,}"#, #"{,}"#, #"{"a":1}x"#, "{\"a\":1}\u{0B}", " {\"a\":1}\n", #"{"a":[1]}"#, #"{"a":{}}"#, #"{}"#, #"{} x"#,
        #"[]"#, #"{"a" 1}"#, #"{"a":1"b":2}"#, #"{1:2}"#, #"{"a":[1,]}"#, #"{"a":[1 2]}"#, #"{"a":[,]}"#, #"{"a":{"b":1,}}"#,
        #"{"a":{"b" 1}}"#, #"{"monitored":[{"region":"a","p":0.5}],"t":3}"#,
    ])
    func edgeCases(_ text: String) {
        let doc = Array(text.utf8)
        let why = Self.disagreement(doc)
        #expect(why == nil, "\(FoundationJSON.show(doc)): \(why ?? "")")
    }

    @Test("invalid UTF-8 in a string is rejected, as Foundation does, and reported as such")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0xFF], [0xC3], [0xC3, 0x28], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80],
                               [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE2, 0x82]] {
            for doc in [Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8), Array(#"{""#.utf8) + bytes + Array(#"":1}"#.utf8)] {
                let why = Self.disagreement(doc)
                #expect(why == nil, "\(FoundationJSON.show(doc)): \(why ?? "")")
                guard case .failure(let error) = Self.read(doc) else { continue }
                #expect(error.kind == .invalidUTF8, "\(FoundationJSON.show(doc)): \(error)")
            }
        }
    }
}
