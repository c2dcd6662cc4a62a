import Testing
@testable import WaymarkPrivacy

@Suite struct PseudonymizerTests {
    func hex(_ b: [UInt8]) -> String { b.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    /// RFC 4231 section 4: key, data and HMAC-SHA-256 (case 5 is truncated to 128 bits).
    static let rfc4231: [(case: Int, key: [UInt8], data: [UInt8], mac: String)] = [
        (1, [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (2, Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (3, [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (4, Array(1...25), [UInt8](repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (5, [UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8),
         "a3b6167473100ee06e0c796c2955552b"),
        (6, [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (7, [UInt8](repeating: 0xaa, count: 131),
         Array(("This is a test using a larger than block-size key and a larger than block-size data. "
                + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test("HMAC-SHA256 matches RFC 4231 test cases 1-7", arguments: 0..<rfc4231.count)
    func hmacRFC4231(_ index: Int) {
        let v = Self.rfc4231[index]
        let mac = hex(Pseudonymizer.hmacSHA256(key: v.key, message: v.data))
        #expect(String(mac.prefix(v.mac.count)) == v.mac, "RFC 4231 case \(v.case)")
        #expect(mac.count == 64, "RFC 4231 case \(v.case): a full HMAC-SHA256 is 32 bytes")
    }

    /// Pseudonyms recorded from the hand-written SHA-256/HMAC this module had before it used
    /// swift-crypto (and checked against Python's hmac module then): pseudonyms already stored must
    /// keep matching the ones gateways compute now. Secrets cover empty, exactly one block (64
    /// bytes), longer than a block (hashed first) and non-ASCII UTF-8.
    static let recorded: [(secret: String, address: UInt64, time: Double, pseudonym: String)] = [
        ("s1", 0x4088_539B_5EBD, 1_700_000_000, "anon:efa13e8539e56c32"),
        ("s1", 0xFFFF_FFFF_FFFF, 1_700_010_000, "anon:2a373853056fd1de"),
        ("s1", 0x0000_0000_00AB, 0, "anon:5021c3ca36c43ac6"),
        ("museum-secret-2024", 0, 0, "anon:2641d9f7eb9fea82"),
        ("museum-secret-2024", 0xC0FF_EE00_0001, 1_735_689_599.5, "anon:91817e88986c7ad0"),
        ("museum-secret-2024", 0x4088_539B_5EBD, 1_709_164_800, "anon:3c003ca0f4d54aa9"),
        ("", 0xFFFF_FFFF_FFFF, 1_709_164_800, "anon:289bb811455f2e9e"),
        ("", 0x0000_0000_00AB, 1_700_000_000, "anon:32780985fd88a4fa"),
        ("", 0, 1_700_010_000, "anon:383cef5b1bff94a2"),
        (String(repeating: "k", count: 64), 0xC0FF_EE00_0001, 1_700_010_000, "anon:ce4ef2eb4641ae32"),
        (String(repeating: "k", count: 64), 0x4088_539B_5EBD, 0, "anon:1d6781744134941d"),
        (String(repeating: "k", count: 64), 0xFFFF_FFFF_FFFF, 1_735_689_599.5, "anon:29a8ca79431f5ffd"),
        (String(repeating: "long", count: 40), 0x0000_0000_00AB, 1_735_689_599.5, "anon:daa13b1452c612f4"),
        (String(repeating: "long", count: 40), 0, 1_709_164_800, "anon:e2eb4409e867e001"),
        (String(repeating: "long", count: 40), 0xC0FF_EE00_0001, 1_700_000_000, "anon:f4a8ed3ce60204e7"),
        ("\u{FC}n\u{EF}c\u{F8}d\u{E9}", 0x4088_539B_5EBD, 1_700_000_000, "anon:1af9945b2a22a114"),
        ("\u{FC}n\u{EF}c\u{F8}d\u{E9}", 0xFFFF_FFFF_FFFF, 1_700_010_000, "anon:0d9b2d2f70289e8d"),
        ("\u{FC}n\u{EF}c\u{F8}d\u{E9}", 0x0000_0000_00AB, 0, "anon:3826c0bf52dc4e32"),
    ]

    @Test("pseudonyms are bit-identical to the recorded ones", arguments: 0..<recorded.count)
    func recordedPseudonyms(_ index: Int) {
        let r = Self.recorded[index]
        var p = Pseudonymizer(secret: r.secret)
        #expect(p.pseudonym(address: r.address, time: r.time).rawValue == r.pseudonym,
                "secret #\(index) (\(r.secret.utf8.count) bytes), time \(r.time)")
    }

    @Test("UTC day strings")
    func days() {
        #expect(Pseudonymizer.dayString(0) == "1970-01-01")
        #expect(Pseudonymizer.dayString(19_723) == "2024-01-01")
        #expect(Pseudonymizer.dayString(19_782) == "2024-02-29")
        #expect(Pseudonymizer.dayString(-1) == "1969-12-31")
    }

    @Test("a pseudonym is stable within a UTC day, changes the next day, and depends on the secret")
    func rotation() {
        var p = Pseudonymizer(secret: "s1")
        let address: UInt64 = 0x4088_539B_5EBD
        let morning = p.pseudonym(address: address, time: 1_700_000_000)   // 2023-11-14 22:13 UTC
        let evening = p.pseudonym(address: address, time: 1_700_006_000)   // 23:53 the same day
        let nextDay = p.pseudonym(address: address, time: 1_700_010_000)   // 01:00 next day
        #expect(morning == evening)
        #expect(morning != nextDay)
        #expect(morning.kind == .anon)
        #expect(morning.rawValue.count == "anon:".count + 16)
        #expect(!morning.rawValue.contains("4088539b5ebd"))
        var other = Pseudonymizer(secret: "s2")
        #expect(other.pseudonym(address: address, time: 1_700_000_000) != morning)
        #expect(p.pseudonym(address: address + 1, time: 1_700_000_000) != morning)
        // Recomputable from the definition: HMAC(HMAC(secret, day), address bytes)[0..<8].
        let dayKey = Pseudonymizer.hmacSHA256(key: Array("s1".utf8), message: Array("2023-11-14".utf8))
        let expected = Pseudonymizer.hmacSHA256(key: dayKey, message: [0x40, 0x88, 0x53, 0x9B, 0x5E, 0xBD]).prefix(8)
        #expect(morning.rawValue == "anon:" + hex(Array(expected)))
    }
}
