import Testing
@testable import WaymarkEdge

@Suite struct PseudonymizerTests {
    func hex(_ b: [UInt8]) -> String { b.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    @Test("SHA-256 matches FIPS 180-4 examples")
    func sha256() {
        #expect(hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(hex(SHA256.hash(Array(two.utf8))) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("HMAC-SHA256 matches RFC 4231")
    func hmac() {
        #expect(hex(HMACSHA256.authenticate(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than the block size.
        #expect(hex(HMACSHA256.authenticate(key: [UInt8](repeating: 0xaa, count: 131),
                                            message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
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
        let dayKey = HMACSHA256.authenticate(key: Array("s1".utf8), message: Array("2023-11-14".utf8))
        let expected = HMACSHA256.authenticate(key: dayKey, message: [0x40, 0x88, 0x53, 0x9B, 0x5E, 0xBD]).prefix(8)
        #expect(morning.rawValue == "anon:" + hex(Array(expected)))
    }
}
