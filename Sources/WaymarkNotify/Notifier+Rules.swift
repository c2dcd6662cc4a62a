import WaymarkCore
import WaymarkFusion

/// The transitions of one device with respect to one rule, and sending (quiet hours, cool-down).
extension Notifier {
    /// Applies a recorded location change to the device's state for `rule`.
    mutating func step(_ rule: NotificationRule, _ rs: inout RuleState, _ l: FusionOutput.LocationChange,
                       into out: inout [RuleNotification]) {
        let inSet = l.region.map { rule.regions.contains($0) } ?? false
        if rs.inside {
            // Moving between the rule's regions is staying in them.
            if inSet { rs.region = l.region; return }
            rs.inside = false
            rs.leftAt = l.t
            let stay = l.t - (rs.enteredAt ?? l.t)
            switch rule.trigger {
            case .exit where rule.absenceS > 0:
                rs.due = l.t + rule.absenceS
            case .exit:
                send(rule, .exit, &rs, device: l.device, t: l.t, dwellS: stay, into: &out)
            case .dwell:
                // Left before the dwell timer was taken: the stay shows whether it was reached.
                if let due = rs.due {
                    rs.due = nil
                    if l.t >= due { send(rule, .dwell, &rs, device: l.device, t: due, dwellS: rule.dwellS, into: &out) }
                }
            case .enter, .return:
                break
            }
            return
        }
        guard inSet, Self.confident(l.confidence, rule) else { return }
        if rule.trigger == .exit, let due = rs.due {
            rs.due = nil
            if l.t < due {
                // Back before the goodbye was due: the stay goes on.
                rs.inside = true
                rs.region = l.region
                return
            }
            // Away long enough: the goodbye (dated at the exit) comes before this new stay.
            let left = rs.leftAt ?? due - rule.absenceS
            send(rule, .exit, &rs, device: l.device, t: left, dwellS: left - (rs.enteredAt ?? left), into: &out)
        }
        let absence = rs.leftAt.map { l.t - $0 }
        rs.inside = true
        rs.enteredAt = l.t
        rs.region = l.region
        rs.confidence = l.confidence
        switch rule.trigger {
        case .enter:
            send(rule, .enter, &rs, device: l.device, t: l.t, into: &out)
        case .return:
            if let absence, absence >= rule.absenceS {
                send(rule, .return, &rs, device: l.device, t: l.t, absenceS: absence, into: &out)
            }
        case .dwell:
            rs.due = l.t + rule.dwellS
        case .exit:
            break
        }
    }

    /// Takes a pending decision whose moment has passed (`advance`, `finish`).
    mutating func settle(_ rule: NotificationRule, _ rs: inout RuleState, device: DeviceID, into out: inout [RuleNotification]) {
        guard let due = rs.due else { return }
        rs.due = nil
        switch rule.trigger {
        case .dwell where rs.inside:
            send(rule, .dwell, &rs, device: device, t: due, dwellS: rule.dwellS, into: &out)
        case .exit where !rs.inside:
            let left = rs.leftAt ?? due - rule.absenceS
            send(rule, .exit, &rs, device: device, t: left, dwellS: left - (rs.enteredAt ?? left), into: &out)
        default:
            break
        }
    }

    /// Whether an entry with the tracker's probability `confidence` counts for `rule`.
    static func confident(_ confidence: Double?, _ rule: NotificationRule) -> Bool {
        guard rule.minConfidence > 0 else { return true }
        guard let confidence else { return false }
        return confidence >= rule.minConfidence
    }

    /// Sends a notification unless quiet hours or the cool-down hold it back.
    mutating func send(_ rule: NotificationRule, _ kind: NotificationRule.Trigger, _ rs: inout RuleState, device: DeviceID,
                       t: Double, dwellS: Double? = nil, absenceS: Double? = nil, into out: inout [RuleNotification]) {
        let local = clock.local(t)
        if rule.quietHours.contains(where: { $0.contains(minuteOfDay: local.minuteOfDay) }) {
            counters.rules[rule.id, default: .init()].suppressed[.quietHours, default: 0] += 1
            return
        }
        if let last = rs.lastSentAt, t - last < rule.cooldownS {
            counters.rules[rule.id, default: .init()].suppressed[.cooldown, default: 0] += 1
            return
        }
        rs.lastSentAt = t
        counters.rules[rule.id, default: .init()].sent += 1
        let region = rs.region ?? ""
        let regionName = site.region(region)?.name ?? region
        let message = rule.message.render(.init(device: device, rule: rule.id, event: kind, region: region, regionName: regionName,
                                                dwellS: dwellS, absenceS: absenceS, local: local))
        out.append(RuleNotification(
            id: NotificationID.make(site: site.id, rule: rule.id, kind: kind, device: device, t: t),
            site: site.id, rule: rule.id, kind: kind, device: device, region: region, regionName: regionName, t: t,
            localTime: local.iso8601, message: message, dwellS: dwellS, absenceS: absenceS,
            confidence: kind == .exit ? nil : rs.confidence, data: rule.data?.rendered, hasWebhook: rule.webhook != nil))
    }
}
