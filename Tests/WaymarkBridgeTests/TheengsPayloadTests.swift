import Testing
import WaymarkCore
@testable import WaymarkBridge

/// Theengs Gateway and OpenMQTTGateway BLE messages, as their documentation shows them.
@Suite struct TheengsPayloadTests {
    @Test("a decoded iBeacon (OpenMQTTGateway's documented example layout)")
    func decodedIBeacon() throws {
        let payload = #"{"id":"60:87:57:4C:9B:C2","mac_type":1,"rssi":-78,"distance":7.85288,"brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","mfid":"4c00","uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":1,"minor":9,"txpower":-66}"#
        let r = try TheengsPayload.parse(BridgeTestSite.bytes(payload), topicLevel: "6087574C9BC2")
        #expect(r.beacon == .iBeacon(uuid: BeaconUUID(BridgeTestSite.uuid)!, major: 1, minor: 9))
        #expect(r.measuredPower == -66)
        #expect(r.rssi == -78)
        #expect(r.address == [0x60, 0x87, 0x57, 0x4C, 0x9B, 0xC2])
        #expect(r.addressIsStable == nil)
    }

    @Test("the beacon UUID as id: the address comes from mac")
    func uuidAsID() throws {
        let payload = #"{"id":"e2c56db5dffb48d2b060d0f5a71096e0","mac_type":1,"rssi":-78,"model_id":"IBEACON","mfid":"4c00","uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":0,"minor":0,"txpower":-66,"mac":"60:87:57:4C:9B:C2"}"#
        let r = try TheengsPayload.parse(BridgeTestSite.bytes(payload), topicLevel: "x")
        #expect(r.address == [0x60, 0x87, 0x57, 0x4C, 0x9B, 0xC2])
        #expect(r.beacon == .iBeacon(uuid: BeaconUUID(BridgeTestSite.uuid)!, major: 0, minor: 0))
    }

    @Test("raw advertising data: an iBeacon in manufacturerdata, an Eddystone-UID in servicedata")
    func rawData() throws {
        // 4c00 0215 <uuid> 0001 0002 c5
        let ibeacon = #"{"id":"AA:BB:CC:DD:EE:01","rssi":-64,"manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"}"#
        let a = try TheengsPayload.parse(BridgeTestSite.bytes(ibeacon), topicLevel: "x")
        #expect(a.beacon == .iBeacon(uuid: BeaconUUID(BridgeTestSite.uuid)!, major: 1, minor: 2))
        #expect(a.measuredPower == -59)
        // frame 00, tx at 0 m -20 (0xec), namespace, instance, two reserved bytes
        let eddy = #"{"id":"AA:BB:CC:DD:EE:02","rssi":-64,"servicedatauuid":"feaa","servicedata":"00ec00112233445566778899a1b2c3d4e5f60000"}"#
        let b = try TheengsPayload.parse(BridgeTestSite.bytes(eddy), topicLevel: "x")
        #expect(b.beacon == .eddystone(namespace: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99],
                                       instance: [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6]))
        #expect(b.measuredPower == -61)
    }

    @Test("a plain device: its address, and its advertised tx power level is not taken as measured power")
    func plainDevice() throws {
        let r = try TheengsPayload.parse(BridgeTestSite.bytes(#"{"id":"C4:7C:8D:6A:12:34","mac_type":0,"rssi":-69,"txpower":12,"name":"Flower care"}"#), topicLevel: "C47C8D6A1234")
        #expect(r.beacon == nil)
        #expect(r.address == [0xC4, 0x7C, 0x8D, 0x6A, 0x12, 0x34])
        #expect(r.addressIsStable == true)
        #expect(r.measuredPower == nil)
    }

    @Test("no rssi → malformed")
    func malformed() {
        #expect(throws: ForeignMessageError.self) { try TheengsPayload.parse(BridgeTestSite.bytes(#"{"id":"C4:7C:8D:6A:12:34"}"#), topicLevel: "x") }
    }
}
