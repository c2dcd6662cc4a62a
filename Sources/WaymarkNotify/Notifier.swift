public import WaymarkCore
public import WaymarkFusion

/// Evaluates the site's notification rules over the fusion engine's outputs (docs/notifications.md).
///
/// A pure state machine, like the engine: no I/O and no clock of its own. It reads the recorded
/// current region (`location` outputs: smoothed, dated at the evidence, with the tracker's
/// probability) and the engine's evidence time (`advance(to:)`), and returns notifications. The
/// aggregator and `waymark replay` feed it the same outputs at the same points, so the same input
/// gives the same notifications with the same ids.
///
/// ```swift
/// var notifier = Notifier(site: site)
/// var notes: [Notification] = []
/// for o in outputs { notifier.observe(o, into: &notes) }   // after each engine call
/// notifier.advance(to: feed.nextTick - 1, into: &notes)     // dwell and delayed goodbyes
/// ```
///
/// For each rule a device is *in* the rule's regions while its recorded region is one of them
/// (moves between them change nothing). Entering counts only with a probability of at least the
/// rule's `min_confidence`. `enter`, `exit` (without `absence_s`) and `return` are decided when
/// the location change is observed; `dwell` and a goodbye that waits `absence_s` are decided when
/// evidence time has passed their moment by `settleS` (the tracker reports a change up to
/// `smoothing_lag_s` and a second after its evidence), and at once when a later change shows the
/// outcome. A notification is then suppressed inside the rule's quiet hours (site time zone) and
/// within `cooldown_s` of the rule's previous one to the same device; suppressed ones start no
/// cool-down.
public struct Notifier: Sendable {
    public let site: Site
    let rules: [NotificationRule]
    let clock: SiteClock
    /// How far evidence time must be past a pending decision before it is taken.
    public let settleS: Double
    var states: [DeviceID: NotifierDeviceState] = [:]
    /// Indices of the rules whose device filter admits each device seen (a cache, not checkpointed).
    var applicable: [DeviceID: [Int]] = [:]
    /// Devices with a pending decision, and the earliest one's time.
    var dueDevices = Set<DeviceID>()
    var nextDue = Double.infinity
    var changed = Set<DeviceID>()
    public internal(set) var counters = NotificationCounters()

    public init(site: Site) {
        self.site = site
        rules = site.notifications
        clock = SiteClock(timeZone: site.timeZone)
        settleS = site.fusion.smoothingLagS + 5
        for rule in rules { counters.rules[rule.id] = .init() }
    }

    /// Whether the site has any rule (without rules every call is a no-op).
    public var isActive: Bool { !rules.isEmpty }

    /// Devices the notifier holds state for.
    public var deviceCount: Int { states.count }

    /// Takes one engine output; `location` changes may fire rules.
    public mutating func observe(_ output: FusionOutput, into out: inout [RuleNotification]) {
        guard !rules.isEmpty, case .location(let l) = output else { return }
        let indices = rulesApplying(to: l.device)
        guard !indices.isEmpty else { return }
        let before = states[l.device] ?? NotifierDeviceState()
        var state = before
        for i in indices {
            let rule = rules[i]
            var rs = state.rules[rule.id] ?? RuleState()
            step(rule, &rs, l, into: &out)
            state.rules[rule.id] = rs
            if let due = rs.due {
                dueDevices.insert(l.device)
                nextDue = min(nextDue, due)
            }
        }
        if state != before {
            states[l.device] = state
            changed.insert(l.device)
        }
    }

    /// Takes the decisions due at evidence time `t`: dwells reached and goodbyes whose absence
    /// has passed, `settleS` after their moment. Call after each engine call with its clock.
    public mutating func advance(to t: Double, into out: inout [RuleNotification]) {
        guard t - settleS >= nextDue else { return }
        decideDue(upTo: t - settleS, into: &out)
    }

    /// End of input (`waymark replay`): takes every decision due by `t` without waiting.
    public mutating func finish(at t: Double, into out: inout [RuleNotification]) {
        guard t >= nextDue else { return }
        decideDue(upTo: t, into: &out)
    }

    mutating func decideDue(upTo limit: Double, into out: inout [RuleNotification]) {
        var due: [(t: Double, device: DeviceID, rule: Int)] = []
        for device in dueDevices {
            guard let state = states[device] else { continue }
            for (i, rule) in rules.enumerated() {
                if let d = state.rules[rule.id]?.due, d <= limit { due.append((d, device, i)) }
            }
        }
        // Set order differs from run to run: decide in a fixed order.
        due.sort { ($0.t, $0.device.rawValue, $0.rule) < ($1.t, $1.device.rawValue, $1.rule) }
        for item in due {
            let rule = rules[item.rule]
            guard var rs = states[item.device]?.rules[rule.id] else { continue }
            settle(rule, &rs, device: item.device, into: &out)
            states[item.device]?.rules[rule.id] = rs
            changed.insert(item.device)
        }
        nextDue = .infinity
        for device in dueDevices {
            let pending = states[device]?.rules.values.compactMap(\.due).min()
            if let pending { nextDue = min(nextDue, pending) } else { dueDevices.remove(device) }
        }
    }

    /// The rules whose `devices:` filter admits `device` (cached).
    mutating func rulesApplying(to device: DeviceID) -> [Int] {
        if let cached = applicable[device] { return cached }
        let indices = rules.indices.filter { rules[$0].devices.matches(device) }
        applicable[device] = indices
        return indices
    }

    // MARK: Checkpoints

    /// The state of every device that changed since the last call, in device order.
    public mutating func takeChanged() -> [NotifierCheckpoint] {
        let out = changed.sorted().map { NotifierCheckpoint(device: $0, state: states[$0] ?? NotifierDeviceState()) }
        changed.removeAll(keepingCapacity: true)
        return out
    }

    /// The state of one device, or nil when the notifier holds none.
    public func checkpoint(device: DeviceID) -> NotifierCheckpoint? {
        states[device].map { NotifierCheckpoint(device: device, state: $0) }
    }

    /// Restores what a previous run checkpointed. State of rules no longer in the site file is dropped.
    public mutating func restore(_ checkpoints: [NotifierCheckpoint]) {
        let known = Set(rules.map(\.id))
        for cp in checkpoints {
            var state = cp.state
            state.rules = state.rules.filter { known.contains($0.key) }
            states[cp.device] = state
            if let due = state.rules.values.compactMap(\.due).min() {
                dueDevices.insert(cp.device)
                nextDue = min(nextDue, due)
            }
        }
    }
}
