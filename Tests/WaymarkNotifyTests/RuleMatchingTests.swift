import Testing
import WaymarkCore
import WaymarkNotify

/// Which regions and devices a rule covers: iBeacon identities at all three levels, ids, tags,
/// floors, and the device allow-list.
@Suite struct RuleMatchingTests {
    @Test func iBeaconIdentityMatchesTheWholeVenueAFloorOrOneExhibit() throws {
        let u = NotifyVenue.uuid
        let site = try NotifyVenue.site("""
          - { id: venue, when: enter, match: { ibeacons: ["\(u)"] } }
          - { id: floor0, when: enter, match: { ibeacons: ["\(u):1"] } }
          - { id: exhibit, when: enter, match: { ibeacons: ["\(u.lowercased()):1:3"] } }
        """)
        let byID = Dictionary(uniqueKeysWithValues: site.notifications.map { ($0.id, $0.regions) })
        // The hall has no identity: a UUID rule covers every region that has one, and only those.
        #expect(byID["venue"] == ["door", "aisle-a", "aisle-b", "cafe"])
        #expect(byID["floor0"] == ["door", "aisle-a", "aisle-b"])
        #expect(byID["exhibit"] == ["aisle-b"])

        // And the notifier acts on exactly those: a device moving door → aisle-b → cafe → hall.
        var driver = NotifierDriver(site)
        let d = NotifyVenue.device(1)
        driver.move(d, to: "door", at: NotifyVenue.day)
        driver.move(d, to: "aisle-b", at: NotifyVenue.day + 60)
        driver.move(d, to: "cafe", at: NotifyVenue.day + 120)
        driver.move(d, to: "hall", at: NotifyVenue.day + 180)
        #expect(driver.sent.map { "\($0.rule)@\($0.region)" } == ["venue@door", "floor0@door", "exhibit@aisle-b"])
    }

    @Test func regionsTagsFloorsAndAllAreUnited() throws {
        let site = try NotifyVenue.site("""
          - { id: r, when: enter, match: { regions: [hall], tags: [food] } }
          - { id: upstairs, when: enter, match: { floors: [1] } }
          - { id: everything, when: enter, match: { all: true } }
          - { id: aisles, when: dwell, dwell_s: 60, match: { tags: [aisles] } }
        """)
        #expect(site.notifications[0].regions == ["hall", "cafe"])
        #expect(site.notifications[1].regions == ["cafe"])
        #expect(site.notifications[2].regions.count == 5)
        #expect(site.notifications[3].regions == ["aisle-a", "aisle-b"])
    }

    @Test func deviceFilterByKindIdAndHierarchicalIdentity() throws {
        let u = NotifyVenue.uuid, o = NotifyVenue.other
        let site = try NotifyVenue.site("""
          - { id: staff, when: enter, match: { all: true }, devices: { ibeacons: ["\(u):7"] } }
          - { id: one, when: enter, match: { all: true }, devices: { ibeacons: ["\(u):7:2"], ids: ["mac:aa-bb-cc-dd-ee-ff"] } }
          - { id: macs, when: enter, match: { all: true }, devices: { kinds: [mac] } }
          - { id: vendor, when: enter, match: { all: true }, devices: { ibeacons: ["\(o)"] } }
        """)
        let f = Dictionary(uniqueKeysWithValues: site.notifications.map { ($0.id, $0.devices) })
        let d72 = NotifyVenue.device(2), d71 = NotifyVenue.device(1), d82 = NotifyVenue.device(2, major: 8)
        let otherVendor = NotifyVenue.device(2, major: 7, uuid: o)
        let mac = DeviceID("mac:aa-bb-cc-dd-ee-ff")!
        #expect(f["staff"]!.matches(d72) && f["staff"]!.matches(d71) && !f["staff"]!.matches(d82) && !f["staff"]!.matches(otherVendor))
        #expect(f["one"]!.matches(d72) && !f["one"]!.matches(d71) && f["one"]!.matches(mac))
        #expect(f["macs"]!.matches(mac) && !f["macs"]!.matches(d72))
        #expect(f["vendor"]!.matches(otherVendor) && !f["vendor"]!.matches(d72))

        var driver = NotifierDriver(site)
        driver.move(d82, to: "door", at: NotifyVenue.day)
        #expect(driver.sent.isEmpty, "no rule admits \(d82)")
        driver.move(d71, to: "door", at: NotifyVenue.day)
        #expect(driver.sent.map(\.rule) == ["staff"])
    }
}
