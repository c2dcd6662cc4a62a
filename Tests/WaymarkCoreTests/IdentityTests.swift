import Testing
import WaymarkCore

@Suite struct IdentityTests {
    @Test func uuidRoundTripsInCanonicalLowerCase() throws {
        let uuid = try #require(BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        #expect(uuid.description == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(BeaconUUID("E2C56DB5DFFB48D2B060D0F5A71096E0") == nil)
        #expect(BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096EZ") == nil)
    }

    @Test func deviceIDsHaveTheDocumentedForms() throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        #expect(DeviceID.ibeacon(uuid: uuid, major: 1, minor: 65535).rawValue == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:65535")
        #expect(DeviceID.mac([0xe7, 0x8f, 0x13, 0x56, 0x24, 0xce]).rawValue == "mac:e7-8f-13-56-24-ce")
        #expect(DeviceID.eddystone(namespace: [UInt8](repeating: 0xab, count: 10), instance: [1, 2, 3, 4, 5, 6]).rawValue
            == "eddystone:abababababababababab:010203040506")
        for valid in ["mac:e7-8f-13-56-24-ce", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:0:7",
                      "altbeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2", "anon:0011223344556677"] {
            #expect(DeviceID(valid) != nil, "\(valid)")
        }
        for invalid in ["mac:E7-8F-13-56-24-CE", "mac:e7:8f:13:56:24:ce", "ibeacon:x:1:2", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:01:2",
                        "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:65536", "eddystone:ab:cd", "phone:1", "", "mac:"] {
            #expect(DeviceID(invalid) == nil, "\(invalid)")
        }
    }

    @Test func hierarchicalIBeaconMatching() throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let other = try #require(BeaconUUID("00000000-0000-0000-0000-000000000001"))
        let any = try #require(IBeaconIdentity(uuid: uuid))
        let major = try #require(IBeaconIdentity(uuid: uuid, major: 3))
        let exact = try #require(IBeaconIdentity(uuid: uuid, major: 3, minor: 9))
        #expect(any.matches(uuid: uuid, major: 1, minor: 1))
        #expect(!any.matches(uuid: other, major: 1, minor: 1))
        #expect(major.matches(uuid: uuid, major: 3, minor: 1) && !major.matches(uuid: uuid, major: 4, minor: 1))
        #expect(exact.matches(uuid: uuid, major: 3, minor: 9) && !exact.matches(uuid: uuid, major: 3, minor: 8))
        #expect(IBeaconIdentity(uuid: uuid, major: nil, minor: 9) == nil)
    }

    @Test func topicsSplitGatewayTopics() {
        let topics = Topics(site: "demo")
        #expect(topics.sightings("gw-1") == "waymark/v1/demo/gateways/gw-1/sightings")
        #expect(topics.gateway(inTopic: "waymark/v1/demo/gateways/gw-1/status")! == ("gw-1", "status"))
        #expect(topics.gateway(inTopic: "waymark/v1/other/gateways/gw-1/status") == nil)
        #expect(topics.gateway(inTopic: "waymark/v1/demo/gateways/gw-1/status/x") == nil)
    }
}
