import Testing
import WaymarkConfig
import WaymarkCore

/// `waymark site check` on notification rules: every mistake is reported with its field path and
/// what to write instead.
@Suite struct RuleValidationTests {
    /// The single error for `rules`, as `path: message`.
    func error(_ rules: String, timezone: String? = nil) -> [String] {
        NotifyVenue.problems(rules, timezone: timezone).map { "\($0.path): \($0.message)" }
    }

    @Test func aCompleteRuleLoadsWithItsDefaults() throws {
        let site = try NotifyVenue.site("""
          - id: hello
            when: enter
            match: { regions: [door] }
            quiet_hours: [{ from: "22:00", to: "07:00" }, { from: "12:00", to: "13:30" }]
            data: { coupon: SPRING, value: 5, tags: [a, b], nested: { x: true } }
            webhook: https://crm.example.com/hooks/waymark
        """, timezone: "Europe/Paris")
        let rule = try #require(site.notifications.first)
        #expect(site.timeZone == "Europe/Paris")
        #expect(rule.cooldownS == NotificationRule.defaultCooldownS)
        #expect(rule.minConfidence == 0)
        #expect(rule.message.source == "Entered {region_name}")
        #expect(rule.quietHours == [QuietHours(fromMinute: 1320, toMinute: 420), QuietHours(fromMinute: 720, toMinute: 810)])
        #expect(rule.data?.rendered == #"{"coupon":"SPRING","nested":{"x":true},"tags":["a","b"],"value":5}"#)
        #expect(rule.webhook == "https://crm.example.com/hooks/waymark")
    }

    @Test func eachMistakeNamesItsFieldAndTheFix() {
        let cases: [(String, String)] = [
            ("- { when: enter, match: { all: true } }", "notifications[0].id: missing"),
            ("- { id: a, match: { all: true } }", "notifications[0].when: missing; add `when:` with one of enter, exit, dwell, return"),
            ("- { id: a, when: arrive, match: { all: true } }", "notifications[0].when: 'arrive' is not a trigger"),
            ("- { id: a, when: enter }", "notifications[0].match: missing; say which regions"),
            ("- { id: a, when: enter, match: {} }", "notifications[0].match: selects nothing"),
            ("- { id: a, when: enter, match: { regions: [lobby] } }", "notifications[0].match.regions[0]: unknown region 'lobby'; known regions: door, aisle-a"),
            ("- { id: a, when: enter, match: { tags: [toys] } }", "notifications[0].match.tags[0]: no region has the tag 'toys'"),
            ("- { id: a, when: enter, match: { floors: [3] } }", "notifications[0].match.floors[0]: no region is on floor 3; floors with regions: 0, 1"),
            ("- { id: a, when: enter, match: { ibeacons: [\"\(NotifyVenue.uuid):9\"] } }", "notifications[0].match.ibeacons[0]: no region's `ibeacon` falls under"),
            ("- { id: a, when: enter, match: { ibeacons: [\"E2C56DB5:1\"] } }", "notifications[0].match.ibeacons[0]: 'E2C56DB5:1' is not an iBeacon identity"),
            ("- { id: a, when: dwell, match: { all: true } }", "notifications[0].dwell_s: missing; a dwell rule fires after"),
            ("- { id: a, when: enter, dwell_s: 5, match: { all: true } }", "notifications[0].dwell_s: only applies to `when: dwell`"),
            ("- { id: a, when: return, match: { all: true } }", "notifications[0].absence_s: missing; a return rule"),
            ("- { id: a, when: enter, cooldown_s: -1, match: { all: true } }", "notifications[0].cooldown_s: must be a time between 0 and"),
            ("- { id: a, when: enter, min_confidence: 80, match: { all: true } }", "notifications[0].min_confidence: must be a probability between 0 and 1"),
            ("- { id: a, when: enter, message: \"Hi {name}\", match: { all: true } }", "notifications[0].message: unknown placeholder {name}; use one of {device}"),
            ("- { id: a, when: enter, message: \"Hi {device\", match: { all: true } }", "notifications[0].message: '{' without a closing '}'"),
            ("- { id: a, when: enter, quiet_hours: { from: \"10pm\", to: \"07:00\" }, match: { all: true } }", "notifications[0].quiet_hours.from: '10pm' is not a time; write HH:MM"),
            ("- { id: a, when: enter, quiet_hours: { from: \"07:00\", to: \"07:00\" }, match: { all: true } }", "notifications[0].quiet_hours: from and to are the same time"),
            ("- { id: a, when: enter, webhook: \"ftp://x\", match: { all: true } }", "notifications[0].webhook: 'ftp://x' is not an http:// or https:// URL"),
            ("- { id: a, when: enter, webhook: \"https://user:pw@x.example/h\", match: { all: true } }", "notifications[0].webhook: holds credentials"),
            ("- { id: a, when: enter, devices: { kinds: [phone] }, match: { all: true } }", "notifications[0].devices.kinds[0]: 'phone' is not a kind of device id; use one of ibeacon, eddystone, altbeacon, mac, anon"),
            ("- { id: a, when: enter, devices: { ids: [\"ibeacon:1\"] }, match: { all: true } }", "notifications[0].devices.ids[0]: 'ibeacon:1' is not a device id"),
            ("- { id: a, when: enter, match: { all: true }, cooldown: 60 }", "notifications[0].cooldown: unknown key 'cooldown'; did you mean 'cooldown_s'?"),
            ("- { id: a, when: enter, match: { all: true, region: [door] } }", "notifications[0].match.region: unknown key 'region'; did you mean 'regions'?"),
            ("- { id: a, when: enter, match: { all: true } }\n  - { id: a, when: exit, match: { all: true } }", "notifications[1].id: duplicate rule id 'a' (also notifications[0])"),
        ]
        for (rules, expected) in cases {
            let got = error("  " + rules)
            #expect(got.count == 1 && got[0].hasPrefix(expected), "\(rules)\n  expected: \(expected)\n  got: \(got)")
        }
    }

    @Test func anUnknownTimeZoneIsAnErrorOfTheTimezoneKey() {
        let got = error("  - { id: a, when: enter, match: { all: true } }", timezone: "Europe/Atlantis")
        #expect(got.count == 1 && got[0].hasPrefix("timezone: unknown time zone 'Europe/Atlantis'; write an IANA name"), "\(got)")
    }

    @Test func aPlainHTTPWebhookAndNoCoolDownAreWarnings() throws {
        let yaml = NotifyVenue.yaml(rules: """
          - { id: a, when: enter, cooldown_s: 0, webhook: "http://crm.example.com/h", match: { all: true } }
        """)
        let (site, warnings) = try SiteLoader.parse(yaml: yaml)
        #expect(site.notifications.count == 1)
        #expect(warnings.map(\.path) == ["notifications[0].cooldown_s", "notifications[0].webhook"])
    }
}
