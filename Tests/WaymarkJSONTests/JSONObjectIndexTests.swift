import Testing
import WaymarkJSON

/// `JSONObjectIndex`, the reader of `waymark evaluate`'s truth, output and sightings lines.
@Suite struct JSONObjectIndexTests {
    @Test("the index reads flat objects, skips nested values and rejects junk")
    func index() {
        let line = Array(#"{"t": 1780304400.123, "a": [1, {"b": "]"}], "s": "x\"y", "n": null, "e": -7.5e1}"#.utf8)
        line.withUnsafeBufferPointer { buf in
            let s = try? JSONObjectIndex(buf)
            #expect(s != nil)
            #expect(abs(s!.number("t")! - 1780304400.123) < 1e-6)
            #expect(s!.number("e") == -75)
            #expect(s!.isNull("n"))
            #expect(s!.raw("missing") == nil)
            #expect(s!.string("s") == #"x"y"#)  // escapes decoded
            #expect(s!.stringBytes("s").map { String(decoding: $0, as: UTF8.self) } == #"x\"y"#)  // as written
        }
        for bad in ["", "[1]", #"{"a": 1"#, #"{"a" 1}"#] {
            Array(bad.utf8).withUnsafeBufferPointer { #expect((try? JSONObjectIndex($0)) == nil) }
        }
    }

    @Test("a key given twice counts by its last value, and a key is found by its decoded text")
    func keys() throws {
        let line = Array(#"{"t": 1, "\u0074ype": "visit", "t": 2, "bool": true, "no": false, "region": 3}"#.utf8)
        try line.withUnsafeBufferPointer { buf in
            let s = try JSONObjectIndex(buf)
            #expect(s.members.count == 6)
            #expect(s.number("t") == 2)
            #expect(s.string("type") == "visit")
            #expect(s.bool("bool") == true && s.bool("no") == false && s.bool("t") == nil)
            #expect(s.string("region") == nil && s.number("region") == 3 && !s.isNull("region"))
        }
    }

    @Test("the error names the problem and where it is")
    func errors() {
        let line = Array(#"{"t": 1, "s": "a"#.utf8)
        let error = line.withUnsafeBufferPointer { buf in
            #expect(throws: JSONError.self) { _ = try JSONObjectIndex(buf) }
        }
        #expect(error == JSONError(.syntax, "unterminated string", offset: line.count))
    }
}
