import Foundation
import Testing
import WaymarkCore
import WaymarkFusion
import WaymarkNotify

/// When rules fire and when they hold back: enter and exit of a set of regions, cool-down, quiet
/// hours in the site's time zone, dwell, return, a goodbye that waits, minimum confidence.
@Suite struct NotifierTests {
    let t0 = NotifyVenue.day + 10 * 3600  // 10:00 UTC
    let d = NotifyVenue.device(1)

    @Test func enterAndExitFireForTheSetNotForMovesInsideIt() throws {
        let site = try NotifyVenue.site("""
          - { id: hello, when: enter, match: { tags: [aisles] } }
          - { id: bye, when: exit, match: { tags: [aisles] }, message: "Bye from {region_name} after {dwell} ({dwell_s} s)" }
        """)
        var driver = NotifierDriver(site)
        driver.move(d, to: "door", at: t0)
        driver.move(d, to: "aisle-a", at: t0 + 10)
        driver.move(d, to: "aisle-b", at: t0 + 70)   // inside the set: nothing
        driver.move(d, to: "hall", at: t0 + 730)
        #expect(driver.sent.map { "\($0.rule):\($0.kind.rawValue)@\($0.region)" } == ["hello:enter@aisle-a", "bye:exit@aisle-b"])
        let bye = try #require(driver.sent.last)
        #expect(bye.t == t0 + 730)
        #expect(bye.dwellS == 720)
        #expect(bye.message == "Bye from Aisle B after 12 min (720 s)")
        #expect(driver.sent.first?.confidence == 0.95)
    }

    @Test func coolDownHoldsBackRepeatsPerDeviceAndRule() throws {
        let site = try NotifyVenue.site("""
          - { id: hello, when: enter, match: { regions: [cafe] }, cooldown_s: 3600 }
        """)
        var driver = NotifierDriver(site)
        let other = NotifyVenue.device(2)
        for k in 0..<6 {  // in and out every 10 minutes for an hour
            driver.move(d, to: "cafe", at: t0 + Double(k) * 600)
            driver.move(d, to: "aisle-b", at: t0 + Double(k) * 600 + 300)
        }
        driver.move(other, to: "cafe", at: t0 + 100)  // another device has its own cool-down
        driver.move(d, to: "cafe", at: t0 + 3600)     // an hour after the first: again
        #expect(driver.sent.map(\.t) == [t0, t0 + 100, t0 + 3600])
        #expect(driver.sent.map(\.device) == [d, other, d])
        #expect(driver.notifier.counters.suppressed(.cooldown) == 5)
    }

    @Test func quietHoursFollowTheSiteTimeZoneAcrossMidnightAndDaylightSaving() throws {
        let site = try NotifyVenue.site("""
          - { id: hello, when: enter, match: { all: true }, cooldown_s: 0, quiet_hours: { from: "22:00", to: "07:30" },
              message: "{time} {date} {datetime}" }
        """, timezone: "Europe/Paris")
        var driver = NotifierDriver(site)
        // 2026-06-01 (CEST, UTC+2): 19:59 UTC is 21:59 local, 20:00 UTC is 22:00, 05:29 UTC is 07:29, 05:30 UTC is 07:30.
        let summer = NotifyVenue.day
        for (h, m) in [(19, 59), (20, 0), (29, 29), (29, 30)] {
            let t = summer + Double(h * 3600 + m * 60)
            driver.move(d, to: "door", at: t)
            driver.move(d, to: nil, at: t + 10)
        }
        #expect(driver.sent.map(\.message) == ["21:59 2026-06-01 2026-06-01T21:59:00+02:00",
                                               "07:30 2026-06-02 2026-06-02T07:30:00+02:00"])
        #expect(driver.sent.map(\.localTime) == ["2026-06-01T21:59:00+02:00", "2026-06-02T07:30:00+02:00"])
        #expect(driver.notifier.counters.suppressed(.quietHours) == 2)
        // 2026-12-01 (CET, UTC+1): 21:30 UTC is 22:30 local (quiet), though 21:30 is not quiet in UTC.
        var winter = NotifierDriver(site)
        let december = 1_796_083_200.0
        winter.move(d, to: "door", at: december + 21.5 * 3600)
        #expect(winter.sent.isEmpty)
        winter.move(d, to: nil, at: december + 21.6 * 3600)
        winter.move(d, to: "cafe", at: december + 30.75 * 3600)  // 07:45 local the next day
        #expect(winter.sent.map(\.localTime) == ["2026-12-02T07:45:00+01:00"])
    }

    @Test func dwellFiresOncePerStayWhenReachedAndNotForShortStays() throws {
        let site = try NotifyVenue.site("""
          - { id: linger, when: dwell, dwell_s: 300, match: { regions: [aisle-a, aisle-b] }, cooldown_s: 0,
              message: "{region_name} for {dwell}" }
        """)
        var driver = NotifierDriver(site)
        let settle = driver.notifier.settleS
        // A short stay: nothing.
        driver.move(d, to: "aisle-a", at: t0)
        driver.move(d, to: "door", at: t0 + 299)
        driver.clock(t0 + 2000)
        #expect(driver.sent.isEmpty)
        // A long one: the dwell is reached at +300 and decided once the clock is settle seconds past it.
        let t1 = t0 + 3000
        driver.move(d, to: "aisle-a", at: t1)
        driver.move(d, to: "aisle-b", at: t1 + 100)  // moves within the set do not restart it
        driver.clock(t1 + 300 + settle - 1)
        #expect(driver.sent.isEmpty)
        driver.clock(t1 + 300 + settle)
        #expect(driver.sent.map(\.t) == [t1 + 300])
        #expect(driver.sent.first?.message == "Aisle B for 5 min")
        driver.clock(t1 + 5000)
        #expect(driver.sent.count == 1, "once per stay")
        // Left after the dwell was reached but before the clock settled it: the exit shows it was reached.
        driver.move(d, to: "door", at: t1 + 6000)
        let t2 = t1 + 7000
        driver.move(d, to: "aisle-a", at: t2)
        driver.move(d, to: "door", at: t2 + 301)
        #expect(driver.sent.map(\.t) == [t1 + 300, t2 + 300])
    }

    @Test func returnNeedsAPreviousVisitAndTheAbsence() throws {
        let site = try NotifyVenue.site("""
          - { id: back, when: return, absence_s: 86400, match: { ibeacons: ["\(NotifyVenue.uuid)"] }, cooldown_s: 0,
              message: "Welcome back after {absence}" }
        """)
        var driver = NotifierDriver(site)
        driver.move(d, to: "door", at: t0)                 // first visit: not a return
        driver.move(d, to: "hall", at: t0 + 600)           // the hall has no identity: away
        driver.move(d, to: "door", at: t0 + 7200)          // back after 1.8 h: too soon
        driver.move(d, to: nil, at: t0 + 7800)
        driver.move(d, to: "cafe", at: t0 + 7800 + 2 * 86_400 + 3600)
        #expect(driver.sent.map(\.kind) == [.return])
        let absence: Double = driver.sent.first?.absenceS ?? 0
        #expect(abs(absence - 176_400) < 1e-3, "2 d 1 h")
        #expect(driver.sent.first?.message == "Welcome back after 2 d 1 h")
    }

    @Test func aGoodbyeWithAbsenceWaitsAndIsCancelledByAComeback() throws {
        let site = try NotifyVenue.site("""
          - { id: bye, when: exit, absence_s: 120, match: { regions: [door, aisle-a] }, cooldown_s: 0 }
        """)
        var driver = NotifierDriver(site)
        let settle = driver.notifier.settleS
        driver.move(d, to: "door", at: t0)
        driver.move(d, to: "hall", at: t0 + 100)
        driver.move(d, to: "aisle-a", at: t0 + 200)        // back within 120 s: the stay goes on
        driver.clock(t0 + 1000)
        #expect(driver.sent.isEmpty)
        driver.move(d, to: nil, at: t0 + 1100)
        driver.clock(t0 + 1100 + 120 + settle - 1)
        #expect(driver.sent.isEmpty)
        driver.clock(t0 + 1100 + 120 + settle)
        let bye = try #require(driver.sent.first)
        #expect(bye.t == t0 + 1100, "dated at the exit")
        #expect(bye.dwellS == 1100, "the whole stay, the short absence included")
        #expect(bye.region == "aisle-a")
        // A comeback observed after the absence passed, before the clock settled it: the goodbye first.
        driver.move(d, to: "door", at: t0 + 5000)
        driver.move(d, to: nil, at: t0 + 5100)
        driver.move(d, to: "door", at: t0 + 5300)
        #expect(driver.sent.map(\.t) == [t0 + 1100, t0 + 5100])
    }

    @Test func entriesBelowTheMinimumConfidenceDoNotCount() throws {
        let site = try NotifyVenue.site("""
          - { id: hello, when: enter, min_confidence: 0.8, match: { tags: [aisles] } }
          - { id: bye, when: exit, min_confidence: 0.8, match: { tags: [aisles] } }
        """)
        var driver = NotifierDriver(site)
        driver.move(d, to: "aisle-a", at: t0, confidence: 0.6)
        driver.move(d, to: "hall", at: t0 + 60)
        #expect(driver.sent.isEmpty, "a doubtful entry is neither greeted nor said goodbye to")
        driver.move(d, to: "aisle-a", at: t0 + 120, confidence: 0.6)
        driver.move(d, to: "aisle-b", at: t0 + 180, confidence: 0.9)  // now it is sure
        driver.move(d, to: "hall", at: t0 + 240)
        #expect(driver.sent.map { "\($0.kind.rawValue)@\($0.region)" } == ["enter@aisle-b", "exit@aisle-b"])
    }

    @Test func idsAreDeterministicAndDistinct() throws {
        let site = try NotifyVenue.site("""
          - { id: hello, when: enter, match: { all: true }, cooldown_s: 0 }
        """)
        func run() -> [RuleNotification] {
            var driver = NotifierDriver(site)
            driver.move(d, to: "door", at: t0 + 0.25)
            driver.move(d, to: nil, at: t0 + 60)
            driver.move(d, to: "door", at: t0 + 120)
            driver.move(NotifyVenue.device(2), to: "door", at: t0 + 0.25)
            return driver.sent
        }
        let a = run(), b = run()
        #expect(a.map(\.id) == b.map(\.id))
        #expect(Set(a.map(\.id)).count == 3)
        #expect(a[0].id == NotificationID.make(site: "store", rule: "hello", kind: .enter, device: d, t: t0 + 0.25))
        #expect(a.allSatisfy { UUID(uuidString: $0.id) != nil && Array($0.id)[14] == "8" }, "UUID version 8")
    }

    @Test func theCheckpointCarriesCoolDownsAndPendingTimersAcrossARestart() throws {
        let site = try NotifyVenue.site("""
          - { id: hello, when: enter, match: { regions: [cafe] }, cooldown_s: 3600 }
          - { id: linger, when: dwell, dwell_s: 600, match: { regions: [cafe] } }
        """)
        var before = NotifierDriver(site)
        before.move(d, to: "cafe", at: t0)
        #expect(before.kinds() == ["enter"])
        let saved = before.notifier.takeChanged()
        #expect(saved.map(\.device) == [d])
        let json = try JSONEncoder().encode(saved)
        let restored = try JSONDecoder().decode([NotifierCheckpoint].self, from: json)
        #expect(restored == saved)

        var after = NotifierDriver(site)
        after.notifier.restore(restored)
        after.move(d, to: "aisle-b", at: t0 + 700)   // left after the dwell: reached
        after.move(d, to: "cafe", at: t0 + 900)      // within the hello's cool-down
        #expect(after.kinds() == ["dwell"], "no second hello after the restart; the dwell timer survived")
        #expect(after.sent.first?.t == t0 + 600)
        // Older or newer states without some keys still read.
        let sparse = try JSONDecoder().decode(NotifierDeviceState.self, from: Data(#"{"rules":{"hello":{"last_sent_at":5,"extra":1}}}"#.utf8))
        #expect(sparse.rules["hello"]?.lastSentAt == 5 && sparse.rules["hello"]?.inside == false)
    }

    @Test func durationsAndLocalTimesReadWell() {
        #expect(MessageTemplate.duration(42) == "42 s")
        #expect(MessageTemplate.duration(754) == "12 min")
        #expect(MessageTemplate.duration(3900) == "1 h 05 min")
        #expect(MessageTemplate.duration(2 * 86_400 + 7300) == "2 d 2 h")
        let utc = SiteClock(timeZone: "UTC").local(0)
        #expect(utc.iso8601 == "1970-01-01T00:00:00Z")
        let ny = SiteClock(timeZone: "America/New_York").local(1_772_000_000)  // 2026-02-25T06:13:20Z
        #expect(ny.iso8601 == "2026-02-25T01:13:20-05:00")
        #expect(SiteClock(timeZone: "Asia/Kolkata").local(NotifyVenue.day).iso8601 == "2026-06-01T05:30:00+05:30")
    }
}
