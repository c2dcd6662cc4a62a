import Testing
import WaymarkCore
@testable import WaymarkBridge

/// ESPresense device messages, as the ESPresense firmware documents and writes them.
@Suite struct ESPresensePayloadTests {
    @Test("an iBeacon: identity from the id, rssi and rssi@1m, the address from mac")
    func iBeacon() throws {
        let payload = #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7","idType":180,"rssi@1m":-59,"rssi":-71,"raw":2.51,"distance":2.1,"var":0.12,"int":1021,"mac":"c3f2a1b4d5e6","close":false}"#
        let r = try ESPresensePayload.parse(BridgeTestSite.bytes(payload), topicID: "ignored")
        #expect(r.beacon == .iBeacon(uuid: BeaconUUID(BridgeTestSite.uuid)!, major: 1, minor: 7))
        #expect(r.rssi == -71)
        #expect(r.measuredPower == -59)
        #expect(r.address == [0xC3, 0xF2, 0xA1, 0xB4, 0xD5, 0xE6])
        #expect(r.addressIsStable == false)
        #expect(r.fingerprintIsUnique == false)
    }

    @Test("Eddystone-UID and AltBeacon ids")
    func otherBeacons() throws {
        let eddy = try ESPresensePayload.parse(BridgeTestSite.bytes(#"{"id":"eddy:00112233445566778899-a1b2c3d4e5f6","rssi":-60}"#), topicID: "x")
        #expect(eddy.beacon == .eddystone(namespace: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99],
                                          instance: [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6]))
        let alt = try ESPresensePayload.parse(BridgeTestSite.bytes(#"{"id":"altBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-3-4","rssi":-60}"#), topicID: "x")
        #expect(alt.beacon == .altBeacon(id1: BeaconUUID(BridgeTestSite.uuid)!.bytes, id2: 3, id3: 4))
    }

    @Test("addresses: a public one, a known one, and the topic's id when the payload has none")
    func addresses() throws {
        let pub = try ESPresensePayload.parse(BridgeTestSite.bytes(#"{"id":"c47c8d6a1234","idType":55,"mac":"c47c8d6a1234","rssi":-80}"#), topicID: "x")
        #expect(pub.address == [0xC4, 0x7C, 0x8D, 0x6A, 0x12, 0x34])
        #expect(pub.addressIsStable == true)
        #expect(pub.fingerprintIsUnique)
        let known = try ESPresensePayload.parse(BridgeTestSite.bytes(#"{"id":"known:c47c8d6a1234","idType":210,"rssi":-80}"#), topicID: "x")
        #expect(known.address == [0xC4, 0x7C, 0x8D, 0x6A, 0x12, 0x34])
        #expect(known.addressIsStable == true)
        let fromTopic = try ESPresensePayload.parse(BridgeTestSite.bytes(#"{"rssi":-80}"#), topicID: "c47c8d6a1234")
        #expect(fromTopic.address == [0xC4, 0x7C, 0x8D, 0x6A, 0x12, 0x34])
    }

    @Test("fingerprints: irk, alias and <type>:<own address> name one device; apple:…, md:…, name:… do not")
    func uniqueness() throws {
        func unique(_ json: String) throws -> Bool {
            try ESPresensePayload.parse(BridgeTestSite.bytes(json), topicID: "x").fingerprintIsUnique
        }
        #expect(try unique(#"{"id":"irk:0123456789abcdef0123456789abcdef","idType":200,"mac":"5a1b2c3d4e5f","rssi":-70}"#))
        #expect(try unique(#"{"id":"alice-phone","idType":250,"mac":"5a1b2c3d4e5f","rssi":-70}"#))
        #expect(try unique(#"{"id":"tile:d1e2f3a4b5c6","idType":135,"mac":"d1e2f3a4b5c6","rssi":-70}"#))
        #expect(try !unique(#"{"id":"apple:1005:9-26","idType":150,"mac":"5a1b2c3d4e5f","rssi":-70}"#))
        #expect(try !unique(#"{"id":"md:0075:25","idType":20,"mac":"5a1b2c3d4e5f","rssi":-70}"#))
        #expect(try !unique(#"{"id":"name:whoop-4a1b","idType":35,"mac":"5a1b2c3d4e5f","rssi":-70}"#))
    }

    @Test("a message without a numeric rssi, or not JSON, is malformed with a message naming the field")
    func malformed() {
        #expect(throws: ForeignMessageError.self) { try ESPresensePayload.parse(BridgeTestSite.bytes(#"{"id":"x","rssi":"-70"}"#), topicID: "x") }
        do {
            _ = try ESPresensePayload.parse(BridgeTestSite.bytes(#"{"id":"x"}"#), topicID: "x")
            Issue.record("accepted a message without rssi")
        } catch {
            #expect(error.reason == .malformed)
            #expect(error.message.contains("'rssi'"))
        }
        #expect(throws: ForeignMessageError.self) { try ESPresensePayload.parse(BridgeTestSite.bytes("online"), topicID: "x") }
    }
}
