import Testing
import WaymarkAdvertising
import WaymarkCore

@Suite struct DeviceIdentityTests {
    func report(ad: [UInt8], addressType: UInt8, address msbFirst: [UInt8]) throws -> AdvertisingReport {
        let event = legacyEvent(ad: ad, addressType: addressType, address: msbFirst.reversed())
        return try #require(try HCIEventDecoder.decode(event).first)
    }

    @Test func beaconIdsWinOverTheAddress() throws {
        let r = try report(ad: BeaconTests.iBeaconAD, addressType: 0, address: [0xE7, 0x8F, 0x13, 0x56, 0x24, 0xCE])
        #expect(r.identity == DeviceIdentity(id: DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1")!, measuredPowerAt1m: -59))
        let uid = try report(ad: BeaconTests.eddystoneUIDAD, addressType: 1, address: [0x4F, 1, 2, 3, 4, 5])
        #expect(uid.identity?.id.rawValue == "eddystone:edd1ebeac04e5defa017:0bdb87539b67")
        #expect(uid.identity?.measuredPowerAt1m == -66)
        let alt = try report(ad: BeaconTests.altBeaconAD, addressType: 1, address: [0x0F, 1, 2, 3, 4, 5])
        #expect(alt.identity?.id.kind == .altbeacon)
    }

    @Test(arguments: [
        (0 as UInt8, [0xE7, 0x8F, 0x13, 0x56, 0x24, 0xCE] as [UInt8], AddressKind.public, "mac:e7-8f-13-56-24-ce" as String?),
        (1, [0xE7, 0x8F, 0x13, 0x56, 0x24, 0xCE], .randomStatic, "mac:e7-8f-13-56-24-ce"),
        (1, [0x4F, 0x8F, 0x13, 0x56, 0x24, 0xCE], .resolvablePrivate, nil),
        (1, [0x0F, 0x8F, 0x13, 0x56, 0x24, 0xCE], .nonResolvablePrivate, nil),
        (1, [0x8F, 0x8F, 0x13, 0x56, 0x24, 0xCE], .reservedRandom, nil),
        (2, [0x00, 0x1A, 0x7D, 0xDA, 0x71, 0x13], .publicIdentity, "mac:00-1a-7d-da-71-13"),
        (3, [0xC1, 0x1A, 0x7D, 0xDA, 0x71, 0x13], .randomStaticIdentity, "mac:c1-1a-7d-da-71-13"),
    ])
    func macOnlyForStableAddresses(type: UInt8, address: [UInt8], kind: AddressKind, id: String?) throws {
        let r = try report(ad: [0x02, 0x01, 0x06], addressType: type, address: address)
        #expect(r.address.kind == kind)
        #expect(r.address.kind.isStable == (id != nil))
        #expect(r.identity?.id.rawValue == id)
        #expect(r.identity.map { $0.measuredPowerAt1m == nil } ?? true)
    }

    @Test func nonIdentifyingFramesStillCalibrateAStableAddress() throws {
        // An Eddystone-URL beacon with a public address: tracked by MAC, calibrated by its tx at 0 m.
        let url: [UInt8] = [0x03, 0x03, 0xAA, 0xFE, 0x08, 0x16, 0xAA, 0xFE, 0x10, 0xEE, 0x03, 0x61, 0x07]
        let r = try report(ad: url, addressType: 0, address: [0x00, 0x1A, 0x7D, 0xDA, 0x71, 0x13])
        #expect(r.beacon?.format == "eddystone-url")
        #expect(r.identity == DeviceIdentity(id: .mac([0x00, 0x1A, 0x7D, 0xDA, 0x71, 0x13]), measuredPowerAt1m: -59))
    }

    @Test func malformedADFallsBackToTheAddress() throws {
        let r = try report(ad: [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15], addressType: 0, address: [0, 1, 2, 3, 4, 5])
        #expect(r.adError != nil)
        #expect(r.identity?.id.rawValue == "mac:00-01-02-03-04-05")
    }

    @Test func addressFormsRoundTrip() {
        let a = BluetoothAddress(bytes: [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF], type: .public)
        #expect(a?.description == "aa:bb:cc:dd:ee:ff")
        #expect(a?.bytes == [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        #expect(a?.value == 0xAABB_CCDD_EEFF)
        #expect(BluetoothAddress(bytes: [1, 2, 3], type: .public) == nil)
        #expect(AddressType.randomIdentity.description == "random-identity")
    }
}
