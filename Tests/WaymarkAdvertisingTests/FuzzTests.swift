import Testing
import WaymarkAdvertising
import WaymarkCore

/// A seeded, deterministic generator (SplitMix64), so a failing input can be reproduced.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Feeds over a million random and mutated inputs through every decoding entry point. Any crash
/// or out-of-bounds read traps the test process (tests run in a debug build, where every index is
/// checked); the expectations check that decoded results are consistent with their input.
@Suite struct FuzzTests {
    static let seeds: [[UInt8]] = [
        HCIEventDecoderTests.real,
        legacyEvent(ad: BeaconTests.iBeaconAD),
        legacyEvent(ad: BeaconTests.eddystoneUIDAD, addressType: 1),
        legacyEvent(ad: BeaconTests.altBeaconAD, eventType: 3),
        legacyEvent(ad: bytes("03 03 AA FE 11 16 AA FE 20 00 0B B8 16 80 00 00 03 E8 00 00 27 11")),
        legacyEvent(ad: [0x03, 0x03, 0xAA, 0xFE, 0x0A, 0x16, 0xAA, 0xFE, 0x10, 0xEE, 0x00, 0x61, 0x07, 0x62]),
        extendedEvent(ad: BeaconTests.iBeaconAD + [0x05, 0x09, 0x41, 0x42, 0x43, 0x44]),
    ]

    @Test func randomAndMutatedInputsNeverCrash() {
        var rng = SplitMix64(state: 0x5741_594D_4152_4B21)
        var decodedEvents = 0, rejectedEvents = 0, decodedAD = 0, rejectedAD = 0, beacons = 0
        var inconsistent: [[UInt8]] = []  // decoded results that contradict their input
        let iterations = 1_050_000
        for i in 0..<iterations {
            let input: [UInt8]
            switch i % 3 {
            case 0: input = Self.random(&rng)
            case 1: input = Self.mutate(Self.seeds[Int(rng.next() % UInt64(Self.seeds.count))], &rng)
            default: input = Self.randomEvent(&rng)
            }
            // The non-throwing entry points: the throwing ones wrap them, and Swift Testing records
            // a backtrace for every thrown error, which would dominate the run time.
            switch HCIEventDecoder.decodeResult(input) {
            case .success(let reports):
                decodedEvents += 1
                if reports.isEmpty || reports.count != Int(input[input[0] == 0x04 ? 4 : 3]) { inconsistent.append(input) }
                for r in reports {
                    if r.data.count > (r.format == .legacy ? 31 : 229) { inconsistent.append(input) }
                    if let b = r.beacon { beacons += 1; _ = b.json.rendered }
                    _ = r.identity
                    if i % 64 == 0 { _ = r.json.rendered }
                }
            case .failure(let error):
                rejectedEvents += 1
                if error.code.isEmpty || error.message.isEmpty { inconsistent.append(input) }
            }
            // The same bytes as bare AD.
            switch AdvertisingData.parseResult(input) {
            case .success(let ad):
                decodedAD += 1
                _ = ad.structures
                _ = ad.beacon
                if i % 64 == 0 { _ = ad.json.rendered }
            case .failure:
                rejectedAD += 1
            }
            if i % 1024 == 0 {
                // Now and then through the throwing API too.
                _ = try? HCIEventDecoder.decode(input)
                _ = try? AdvertisingData(parsing: input)
            }
        }
        #expect(inconsistent.isEmpty, "first: \(inconsistent.first.map { Hex.encode($0) } ?? "")")
        // Both the accepting and the rejecting paths were exercised heavily.
        #expect(decodedEvents > 100_000)
        #expect(rejectedEvents > 100_000)
        #expect(decodedAD > 10_000)
        #expect(rejectedAD > 100_000)
        #expect(beacons > 1_000)
    }

    static func random(_ rng: inout SplitMix64) -> [UInt8] {
        randomBytes(Int(rng.next() % 80), &rng)
    }

    /// `n` random bytes, eight per generator step (input generation dominates a debug build).
    static func randomBytes(_ n: Int, _ rng: inout SplitMix64) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: n) { buffer, count in
            var i = 0
            while i < n {
                var x = rng.next()
                for _ in 0..<min(8, n - i) {
                    buffer[i] = UInt8(truncatingIfNeeded: x)
                    x >>= 8
                    i += 1
                }
            }
            count = n
        }
    }

    /// A syntactically plausible event: right header, random body, mostly-right lengths.
    static func randomEvent(_ rng: inout SplitMix64) -> [UInt8] {
        let extended = rng.next() % 4 == 0
        var body: [UInt8] = [extended ? 0x0D : 0x02, UInt8(1 + rng.next() % 3)]
        let reports = Int(body[1])
        for _ in 0..<reports {
            let ad = randomAD(&rng)
            if extended {
                body += randomBytes(23, &rng)
                body.append(UInt8(ad.count))
                body += ad
            } else {
                body += randomBytes(8, &rng)
                body.append(UInt8(ad.count))
                body += ad
                body.append(UInt8(truncatingIfNeeded: rng.next()))
            }
        }
        if rng.next() % 8 == 0, !body.isEmpty { body.removeLast(Int(rng.next() % UInt64(body.count))) }
        let length = rng.next() % 16 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : UInt8(truncatingIfNeeded: body.count)
        return [0x04, 0x3E, length] + body
    }

    /// Random AD structures, with lengths usually right and types drawn from the interpreted ones.
    static func randomAD(_ rng: inout SplitMix64) -> [UInt8] {
        let types: [UInt8] = [0x01, 0x02, 0x03, 0x05, 0x07, 0x08, 0x09, 0x0A, 0x16, 0x20, 0x21, 0xFF, 0x19]
        var ad: [UInt8] = []
        for _ in 0..<Int(rng.next() % 4) {
            var value = randomBytes(Int(rng.next() % 26), &rng)
            let type = types[Int(rng.next() % UInt64(types.count))]
            if type == 0x16, rng.next() % 2 == 0 {
                value = [0xAA, 0xFE, [0x00, 0x10, 0x20, 0x30][Int(rng.next() % 4)]] + value
            }
            if type == 0xFF, rng.next() % 2 == 0 { value = [0x4C, 0x00, 0x02, 0x15] + value }
            let length = rng.next() % 10 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : UInt8(truncatingIfNeeded: value.count + 1)
            ad += [length, type] + value
        }
        return Array(ad.prefix(rng.next() % 5 == 0 ? 229 : 31))
    }

    /// Byte flips, insertions, deletions, truncation and length-field tweaks of a valid event.
    static func mutate(_ seed: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var b = seed
        for _ in 0..<(1 + Int(rng.next() % 4)) {
            guard !b.isEmpty else { break }
            let at = Int(rng.next() % UInt64(b.count))
            switch rng.next() % 6 {
            case 0: b[at] = UInt8(truncatingIfNeeded: rng.next())
            case 1: b[at] ^= UInt8(1) << (rng.next() % 8)
            case 2: b.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
            case 3: b.remove(at: at)
            case 4: b.removeLast(b.count - at)
            default: b[at] = b[at] &+ (rng.next() % 2 == 0 ? 1 : 255)
            }
        }
        return b
    }
}
