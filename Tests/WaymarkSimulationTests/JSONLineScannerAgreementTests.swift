import Foundation
import JSONFuzzSupport
import Testing
@testable import WaymarkSimulation

/// `JSONLineScanner` (the reader of `waymark evaluate`'s truth, output and sightings files)
/// against Foundation's `JSONSerialization` on random objects of the keys those files use, nested
/// values included, and random mutations of them: the same lines accepted, the same values read.
@Suite struct JSONLineScannerAgreementTests {
    static let keys: [StaticString] = ["t", "type", "device", "region", "entered", "exited", "inferred", "monitored", "rssi", "\u{e9}"]

    /// Why the scanner and Foundation disagree on `doc`, or nil.
    static func disagreement(_ doc: [UInt8]) -> String? {
        let reference = FoundationJSON.object(doc)
        return doc.withUnsafeBufferPointer { line -> String? in
            let scanner = JSONLineScanner(line: line)
            guard let reference else { return scanner == nil ? nil : "accepted what Foundation rejects" }
            guard let scanner else { return "rejected what Foundation accepts" }
            guard scanner.members.count >= reference.count else { return "\(scanner.members.count) members, Foundation read \(reference.count)" }
            for key in keys {
                let name = key.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
                guard let ref = reference[name] else {
                    if scanner.raw(key) != nil { return "found '\(name)', which Foundation did not" }
                    continue
                }
                let same: Bool
                if let s = FoundationJSON.stringBytes(ref) {
                    same = scanner.string(key).map { Array($0.utf8) } == s
                } else if ref is NSNull {
                    same = scanner.isNull(key)
                } else if FoundationJSON.isBool(ref) {
                    same = scanner.bool(key) == (ref as! NSNumber).boolValue
                } else if ref is NSNumber {
                    same = scanner.number(key).map { FoundationJSON.sameNumber($0, ref) } ?? false
                } else {
                    same = scanner.raw(key).map { $0.first == UInt8(ascii: "[") || $0.first == UInt8(ascii: "{") } ?? false
                }
                if !same {
                    let raw = scanner.raw(key).map { String(decoding: $0, as: UTF8.self) } ?? "nothing"
                    return "'\(name)' read as \(raw), Foundation read \(ref)"
                }
            }
            return nil
        }
    }

    @Test("JSONLineScanner agrees with JSONSerialization on 30,000 random and mutated lines")
    func fuzz() {
        var fuzz = JSONFuzz(seed: 2112)
        var problems: [String] = []
        var accepted = 0
        for round in 0..<30_000 {
            let members = (0..<fuzz.int(0...6)).map { _ in
                let key = Self.keys[fuzz.int(0...(Self.keys.count - 1))].withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
                return (key: "\"\(key)\"", value: fuzz.chance(0.15) ? fuzz.value() : fuzz.scalar())
            }
            var doc = Array((fuzz.space() + fuzz.object(members) + fuzz.space()).utf8)
            if fuzz.chance(0.7) { doc = fuzz.mutate(doc) }
            if FoundationJSON.object(doc) != nil { accepted += 1 }
            if let why = Self.disagreement(doc), problems.count < 10 {
                problems.append("#\(round) \(FoundationJSON.show(doc)): \(why)")
            }
        }
        #expect(problems.isEmpty, "JSONLineScanner and JSONSerialization disagree:\n\(problems.joined(separator: "\n"))")
        #expect(accepted > 5_000 && accepted < 25_000, "Foundation accepted \(accepted) of 30000 lines")
    }

    @Test("JSONLineScanner agrees with JSONSerialization on the edge cases of RFC 8259", arguments: [
        #"{"t":01}"#, #"{"t":1.}"#, #"{"t":.5}"#, #"{"t":+1}"#, #"{"t":1e400}"#, #"{"t":-1e-400}"#, #"{"t":0.1}"#,
        #"{"t":1700000000.1234567}"#, #"{"t":9007199254740993}"#, #"{"t":1,"t":2}"#, "{\"type\":\"x\u{01}\"}",
        #"{"type":"\ud83d\ude00"}"#, #"{"type":"\ud83d"}"#, #"{"type":"a\"b\\c\/d\n"}"#, #"{"type":"\u00e9"}"#,
        #"{"t":tru}"#, #"{"t":1} x"#, #"{"t":[1,]}"#, #"{"t":[1 2]}"#, #"{"t":{"a":1,}}"#, #"{"t":{"a" 1}}"#, #"{}"#, #"{} x"#,
        #"{"monitored":[{"region":"a","p":0.5}],"t":3}"#, #"{"t":"\x41"}"#, #"{"t":1,}"#,
    ])
    func edgeCases(_ text: String) {
        let doc = Array(text.utf8)
        let why = Self.disagreement(doc)
        #expect(why == nil, "\(FoundationJSON.show(doc)): \(why ?? "")")
    }
}
