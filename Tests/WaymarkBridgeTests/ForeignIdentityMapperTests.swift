import Testing
import WaymarkCore
@testable import WaymarkBridge

/// The tracking rules applied to foreign reports, as the edge applies them to its own adverts.
@Suite struct ForeignIdentityMapperTests {
    let uuid = BeaconUUID(BridgeTestSite.uuid)!
    let listedMAC: [UInt8] = [0xC4, 0x7C, 0x8D, 0x6A, 0x12, 0x34]

    @Test("tracked beacons and listed stable addresses map to their ids; the rest is dropped with a reason")
    func allowLists() throws {
        var m = ForeignIdentityMapper(rules: try BridgeTestSite.site().tracking)
        let beacon = ForeignReport(format: .espresense, rssi: -70, beacon: .iBeacon(uuid: uuid, major: 1, minor: 7),
                                   address: [1, 2, 3, 4, 5, 6], addressIsStable: false, fingerprint: "iBeacon:…")
        #expect(m.map(beacon, time: 0) == .tracked(.ibeacon(uuid: uuid, major: 1, minor: 7)))
        let other = BeaconUUID("00000000-0000-0000-0000-000000000001")!
        var untrackedBeacon = beacon
        untrackedBeacon.beacon = .iBeacon(uuid: other, major: 1, minor: 1)
        untrackedBeacon.addressIsStable = nil
        #expect(m.map(untrackedBeacon, time: 0) == .dropped(.untracked))
        let mac = ForeignReport(format: .theengs, rssi: -70, address: listedMAC)
        #expect(m.map(mac, time: 0) == .tracked(.mac(listedMAC)))
        var rotating = mac
        rotating.addressIsStable = false
        #expect(m.map(rotating, time: 0) == .dropped(.randomAddress), "a listed address that the receiver says rotates is not an identity")
        let apple = ForeignReport(format: .espresense, rssi: -70, address: [0x5A, 1, 2, 3, 4, 5], addressIsStable: false,
                                  fingerprint: "apple:1005:9-26", fingerprintIsUnique: false)
        #expect(m.map(apple, time: 0) == .dropped(.notUnique))
    }

    @Test("pseudonymous: the address's pseudonym is the edge's; an irk id outlives its rotating address")
    func pseudonyms() throws {
        let site = try BridgeTestSite.site(pseudonymous: true)
        var m = ForeignIdentityMapper(rules: site.tracking)
        let t = 1_780_000_000.0
        let address: [UInt8] = [0x40, 0x88, 0x53, 0x9B, 0x5E, 0xBD]
        let a = ForeignReport(format: .theengs, rssi: -70, address: address)
        guard case .tracked(let id) = m.map(a, time: t) else { Issue.record("not tracked"); return }
        #expect(id.kind == .anon)
        #expect(!id.rawValue.contains("4088539b5ebd"))
        // The edge's own pseudonymizer gives the same id for the same address and day.
        var edge = WaymarkBridgeTestPseudonyms(secret: "0123456789abcdef-secret")
        #expect(edge.pseudonym(address: address, time: t) == id)
        let irk1 = ForeignReport(format: .espresense, rssi: -70, address: [0x5A, 1, 1, 1, 1, 1], addressIsStable: false,
                                 fingerprint: "irk:0123456789abcdef0123456789abcdef", fingerprintIsUnique: true)
        var irk2 = irk1
        irk2.address = [0x6B, 2, 2, 2, 2, 2]
        #expect(m.map(irk1, time: t) == m.map(irk2, time: t + 60))
        if case .tracked(let other) = m.map(irk1, time: t + 86_400) { #expect(other != id) }
    }
}
