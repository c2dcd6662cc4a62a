import Foundation
import WaymarkCore
import WaymarkFusion

extension AggregatorCore {
    /// A gateway's retained status: recorded for the gateway health report, and fed to the engine
    /// (offline makes the regions that depend on the gateway `unknown`).
    ///
    /// A retained status delivered on subscribe may be old: it is recorded at its own (corrected)
    /// time, so a re-delivery after a restart hits the same row, and it is not fed to the engine
    /// unless it is newer than the evidence processed so far. A retained status without a usable
    /// time is recorded at its receive time unless the gateway's latest recorded status already
    /// says the same (state and boot), so restarts do not add a row each.
    ///
    /// The engine gets a status in evidence order: one with a usable time of its own goes through
    /// the reorder stage at that time, so it reaches the engine between the same batches whether
    /// the aggregator ran through or restarted and took in a backlog (issue 19). A status without a
    /// usable time applies at the newest evidence fused so far (never at the receive clock, which
    /// can be far ahead of the batches' times — a backlog from a spool, or a replayed venue).
    mutating func handleStatus(gateway: String, payload: [UInt8], receivedAt: Double, retained: Bool) -> Outcome {
        guard payload.count <= settings.maxPayloadBytes else { return reject(.oversize, gateway: gateway, at: receivedAt) }
        guard let g = site.gatewayIndex(gateway) else { return reject(.unknownGateway, gateway: gateway, at: receivedAt) }
        let status: GatewayStatus
        do { status = try StatusDecoder.decode(payload) } catch { return reject(error.reason, gateway: gateway, at: receivedAt) }
        guard status.gateway == gateway else { return reject(.gatewayMismatch, gateway: gateway, at: receivedAt) }
        let offset = clocks[gateway]?.offset ?? 0
        let summary = StatusSummary(state: status.state, boot: status.boot, reportedAt: status.t)
        // The status's own time, corrected like its gateway's batches, when it is plausible.
        let reported = status.t.map { $0 + offset }.flatMap { t in
            t.isFinite && t >= ClockSanity.earliestPlausible && t <= receivedAt + 5 ? t : nil
        }
        if retained {
            // The status we recorded last, delivered again on (re)subscribe: already recorded and
            // applied, so nothing to do (feeding it again would move the gateway's health and the
            // engine would diverge from a run that was never restarted).
            if let known = lastStatus[gateway], known.sameState(as: summary), let t = status.t, let seen = known.reportedAt,
               abs(t - seen) < 0.001 {
                return .status(gateway: gateway)
            }
            guard let reported else {
                // No usable time: its age is unknown, so it is not fed to the engine.
                if !(lastStatus[gateway]?.sameState(as: summary) ?? false) {
                    lastStatus[gateway] = summary
                    pending.statuses.append(.init(gateway: gateway, receivedAt: receivedAt, status: status, payload: payload))
                }
                return .status(gateway: gateway)
            }
            lastStatus[gateway] = summary
            pending.statuses.append(.init(gateway: gateway, receivedAt: reported, status: status, payload: payload))
            if status.state == .offline { reorder.caughtUp(gateway) }  // offline when we (re)subscribed: nothing to wait for
        } else {
            lastStatus[gateway] = summary
            pending.statuses.append(.init(gateway: gateway, receivedAt: receivedAt, status: status, payload: payload))
            reorder.setOnline(gateway, status.state == .online)
        }
        let online = status.state == .online
        if let reported {
            let item = HeldBatch(key: .init(gateway: gateway, boot: status.boot ?? ""), seq: 0, batch: nil, gateway: g,
                                 offset: offset, receivedAt: reported, statusOnline: online)
            fuse(reorder.insertEvent(item, source: gateway, rank: g, time: reported, at: receivedAt))
        } else {
            applyStatus(gateway: g, online: online, reportedAt: nil)
        }
        return .status(gateway: gateway)
    }

    /// Feeds a status to the engine: a heartbeat at its own time but never after the newest
    /// evidence fused, an offline status at the newest evidence.
    mutating func applyStatus(gateway g: Int, online: Bool, reportedAt: Double?) {
        var at = latest
        if online, let reportedAt { at = latest.isFinite ? min(latest, reportedAt) : reportedAt }
        guard at.isFinite else { return }
        outputs += fusion.gatewayStatus(g, online: online, at: at)
        route()
    }
}

/// What a gateway's latest recorded status said (to skip re-recording a retained one).
public struct StatusSummary: Hashable, Sendable {
    public var state: GatewayStatus.State
    public var boot: String?
    /// The status's own time (`t`), when it had one.
    public var reportedAt: Double?
    public init(state: GatewayStatus.State, boot: String?, reportedAt: Double? = nil) {
        self.state = state
        self.boot = boot
        self.reportedAt = reportedAt
    }

    /// Same state and boot (whatever the time).
    func sameState(as other: StatusSummary) -> Bool { state == other.state && boot == other.boot }
}
