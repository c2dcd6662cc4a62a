import WaymarkJSON

/// Checks of the `notifications:` section: every field with its path and the fix.
extension SiteValidator {
    /// The largest `data:` a rule may carry, rendered as JSON (it goes into every notification).
    static let maxDataBytes = 8192
    /// The longest `message:`.
    static let maxMessageCharacters = 1000

    static func notificationRules(_ entries: [SiteDocument.NotificationEntry], regions: [Region],
                                  error: (String, String) -> Void, warning: (String, String) -> Void) -> [NotificationRule] {
        var rules: [NotificationRule] = []
        var seen: [String: Int] = [:]
        for (i, e) in entries.enumerated() {
            let path = "notifications[\(i)]"
            var ok = true
            func fail(_ field: String, _ message: String) {
                error(field.isEmpty ? path : "\(path).\(field)", message)
                ok = false
            }
            guard let id = e.id else { fail("id", "missing; every rule needs an id such as hello-shop"); continue }
            if !isTopicSafeID(id) { fail("id", "'\(id)' is not a valid id; use 1–64 letters, digits, '-', '_' or '.'") }
            if let first = seen[id] { fail("id", "duplicate rule id '\(id)' (also notifications[\(first)]); give each rule its own id") }
            seen[id] = i

            let triggers = NotificationRule.Trigger.allCases.map(\.rawValue).joined(separator: ", ")
            guard let whenText = e.when else { fail("when", "missing; add `when:` with one of \(triggers)"); continue }
            guard let trigger = NotificationRule.Trigger(rawValue: whenText) else {
                fail("when", "'\(whenText)' is not a trigger; use one of \(triggers)")
                continue
            }

            let matched = matchedRegions(e.match, regions: regions, path: path, fail: fail)
            let devices = deviceFilter(e.devices, fail: fail)

            func seconds(_ value: Double?, _ key: String, range: ClosedRange<Double>, what: String) -> Double? {
                guard let value else { return nil }
                guard value.isFinite, range.contains(value) else {
                    fail(key, "must be \(what) between \(Int(range.lowerBound)) and \(Int(range.upperBound)) seconds, got \(value)")
                    return nil
                }
                return value
            }
            let longest = 365 * 86_400.0
            var dwell = 0.0, absence = 0.0
            switch trigger {
            case .dwell:
                if let d = seconds(e.dwellS, "dwell_s", range: 1...longest, what: "a time") { dwell = d } else if e.dwellS == nil {
                    fail("dwell_s", "missing; a dwell rule fires after the device has been in the regions this many seconds, e.g. `dwell_s: 300`")
                }
            default:
                if e.dwellS != nil { fail("dwell_s", "only applies to `when: dwell`; remove it or change `when`") }
            }
            switch trigger {
            case .return:
                if let a = seconds(e.absenceS, "absence_s", range: 1...longest, what: "a time") { absence = a } else if e.absenceS == nil {
                    fail("absence_s", "missing; a return rule fires when a device comes back after being away at least this many seconds, e.g. `absence_s: 86400`")
                }
            case .exit:
                absence = seconds(e.absenceS, "absence_s", range: 0...longest, what: "a time") ?? 0
            default:
                if e.absenceS != nil { fail("absence_s", "only applies to `when: return` and `when: exit`; remove it or change `when`") }
            }
            let cooldown = seconds(e.cooldownS, "cooldown_s", range: 0...longest, what: "a time") ?? NotificationRule.defaultCooldownS
            if e.cooldownS == 0 && (trigger == .enter || trigger == .exit) {
                warning("\(path).cooldown_s", "0 sends a notification on every \(trigger.rawValue), even for a device on the edge of the regions; one per hour (3600) is the default")
            }

            var quiet: [QuietHours] = []
            for (j, q) in (e.quietHours ?? []).enumerated() {
                let qpath = e.quietHours?.count == 1 ? "quiet_hours" : "quiet_hours[\(j)]"
                let from = q.from.flatMap(QuietHours.minutes), to = q.to.flatMap(QuietHours.minutes)
                if from == nil { fail("\(qpath).from", q.from.map { "'\($0)' is not a time; write HH:MM, e.g. \"22:00\"" } ?? "missing; write `from: \"22:00\"`") }
                if to == nil { fail("\(qpath).to", q.to.map { "'\($0)' is not a time; write HH:MM, e.g. \"07:00\"" } ?? "missing; write `to: \"07:00\"`") }
                guard let from, let to else { continue }
                if from % 1440 == to % 1440 { fail(qpath, "from and to are the same time; a quiet period needs two different times (22:00 to 07:00 spans midnight)") }
                quiet.append(QuietHours(fromMinute: from % 1440, toMinute: to % 1440))
            }

            let minConfidence = e.minConfidence ?? 0
            if !(minConfidence >= 0 && minConfidence <= 1) {
                fail("min_confidence", "must be a probability between 0 and 1 (e.g. 0.8), got \(minConfidence)")
            }

            var message: MessageTemplate?
            if let text = e.message {
                if text.isEmpty || text.count > maxMessageCharacters {
                    fail("message", "must have 1 to \(maxMessageCharacters) characters; leave it out for the default (\(MessageTemplate.defaultMessage(for: trigger)))")
                } else {
                    switch MessageTemplate.parse(text) {
                    case .success(let t): message = t
                    case .failure(let problem): fail("message", problem.message)
                    }
                }
            }

            let data = e.data?.json
            if let data {
                var bytes: [UInt8] = []
                data.render(into: &bytes)
                if bytes.count > maxDataBytes { fail("data", "is \(bytes.count) bytes as JSON; keep it under \(maxDataBytes) (it is sent with every notification)") }
            }

            let webhook = e.webhook.flatMap { url in checkWebhook(url, fail: { fail("webhook", $0) }, warn: { warning("\(path).webhook", $0) }) }

            guard ok, let matched else { continue }
            rules.append(NotificationRule(
                id: id, trigger: trigger, regions: matched, devices: devices, dwellS: dwell, absenceS: absence,
                cooldownS: cooldown, quietHours: quiet, minConfidence: minConfidence, message: message, data: data,
                webhook: webhook))
        }
        return rules
    }

    /// The region ids `match:` selects; nil (after reporting why) when it selects none.
    static func matchedRegions(_ m: SiteDocument.NotificationEntry.MatchEntry?, regions: [Region], path: String,
                               fail: (String, String) -> Void) -> Set<String>? {
        let how = "name regions: [ids], tags: [tags], floors: [numbers], ibeacons: [\"UUID[:major[:minor]]\"] or all: true"
        guard let m else { fail("match", "missing; say which regions the rule watches: \(how)"); return nil }
        var out = Set<String>()
        var selectors = 0
        if m.all == true {
            selectors += 1
            out.formUnion(regions.map(\.id))
        }
        let known = Set(regions.map(\.id))
        for (j, id) in (m.regions ?? []).enumerated() {
            selectors += 1
            if known.contains(id) { out.insert(id) } else {
                fail("match.regions[\(j)]", "unknown region '\(id)'; known regions: \(regions.map(\.id).joined(separator: ", "))")
            }
        }
        let tags = Set(regions.flatMap(\.tags))
        for (j, tag) in (m.tags ?? []).enumerated() {
            selectors += 1
            let hits = regions.filter { $0.tags.contains(tag) }
            if hits.isEmpty {
                fail("match.tags[\(j)]", "no region has the tag '\(tag)'; add `tags: [\(tag)]` to the regions it means"
                     + (tags.isEmpty ? "" : " (tags in use: \(tags.sorted().joined(separator: ", ")))"))
            }
            out.formUnion(hits.map(\.id))
        }
        for (j, floor) in (m.floors ?? []).enumerated() {
            selectors += 1
            let hits = regions.filter { $0.floor == floor }
            if hits.isEmpty {
                fail("match.floors[\(j)]", "no region is on floor \(floor); floors with regions: \(Set(regions.map(\.floor)).sorted().map(String.init).joined(separator: ", "))")
            }
            out.formUnion(hits.map(\.id))
        }
        for (j, text) in (m.ibeacons ?? []).enumerated() {
            selectors += 1
            guard let identity = parseIdentity(text) else {
                fail("match.ibeacons[\(j)]", "'\(text)' is not an iBeacon identity; write UUID, UUID:major or UUID:major:minor (major and minor 0–65535), e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1")
                continue
            }
            // A region falls under the identity when its own identity is at least as narrow.
            let hits = regions.filter { r in
                guard let b = r.ibeacon, b.uuid == identity.uuid else { return false }
                if let major = identity.major, b.major != major { return false }
                if let minor = identity.minor, b.minor != minor { return false }
                return true
            }
            if hits.isEmpty {
                fail("match.ibeacons[\(j)]", "no region's `ibeacon` falls under \(identity); give the regions iBeacon identities (regions[].ibeacon) or match them another way")
            }
            out.formUnion(hits.map(\.id))
        }
        if selectors == 0 {
            fail("match", "selects nothing; \(how)")
            return nil
        }
        return out.isEmpty ? nil : out
    }

    /// `devices:` as a filter (reporting what does not parse).
    static func deviceFilter(_ d: SiteDocument.NotificationEntry.DevicesEntry?, fail: (String, String) -> Void) -> NotificationDeviceFilter {
        var filter = NotificationDeviceFilter()
        guard let d else { return filter }
        let kinds = DeviceID.Kind.allCases.map(\.rawValue).joined(separator: ", ")
        for (j, text) in (d.kinds ?? []).enumerated() {
            if let kind = DeviceID.Kind(rawValue: text) { filter.kinds.insert(kind) } else {
                fail("devices.kinds[\(j)]", "'\(text)' is not a kind of device id; use one of \(kinds)")
            }
        }
        for (j, text) in (d.ids ?? []).enumerated() {
            if let id = DeviceID(text) { filter.ids.insert(id) } else {
                fail("devices.ids[\(j)]", "'\(text)' is not a device id; write it as the aggregator shows it, e.g. ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7 or mac:aa-bb-cc-dd-ee-ff")
            }
        }
        for (j, text) in (d.ibeacons ?? []).enumerated() {
            if let id = parseIdentity(text) { filter.ibeacons.append(id) } else {
                fail("devices.ibeacons[\(j)]", "'\(text)' is not an iBeacon identity; write UUID, UUID:major or UUID:major:minor, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:7")
            }
        }
        return filter
    }

    /// `UUID`, `UUID:major` or `UUID:major:minor`.
    static func parseIdentity(_ text: String) -> IBeaconIdentity? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 3, let uuid = BeaconUUID(parts[0]) else { return nil }
        let numbers = parts.dropFirst().map { UInt16($0) }
        guard numbers.allSatisfy({ $0 != nil }) else { return nil }
        return IBeaconIdentity(uuid: uuid, major: numbers.first ?? nil, minor: numbers.dropFirst().first ?? nil)
    }

    /// A webhook URL: http(s), a host, no credentials (the signature secret authenticates, and a
    /// URL with a password would end up in logs and tables).
    static func checkWebhook(_ url: String, fail: (String) -> Void, warn: (String) -> Void) -> String? {
        let lower = url.lowercased()
        let scheme = lower.hasPrefix("https://") ? "https" : lower.hasPrefix("http://") ? "http" : nil
        guard let scheme else {
            fail("'\(url)' is not an http:// or https:// URL; write e.g. https://crm.example.com/hooks/waymark")
            return nil
        }
        guard url.utf8.count <= 2048, !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            fail("must be a URL of at most 2048 characters without spaces or control characters")
            return nil
        }
        let rest = url.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.contains("@") {
            fail("holds credentials; remove them from the URL: each request is signed with the rule's secret from the aggregator configuration (webhooks.secrets_file)")
            return nil
        }
        let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }.dropFirst())
            : String(authority.prefix { $0 != ":" })
        if host.isEmpty {
            fail("'\(url)' has no host; write e.g. https://crm.example.com/hooks/waymark")
            return nil
        }
        if scheme == "http" && !["localhost", "127.0.0.1", "::1"].contains(host.lowercased()) {
            warn("http:// sends notifications (with device ids) unencrypted; the signature proves who sent them but hides nothing — use https://")
        }
        return url
    }
}
