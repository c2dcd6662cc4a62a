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
    /// The engine gets a status at the time of the newest evidence it has: a heartbeat at the
    /// receive time would lie in the future of the evidence whenever batches carry older times, and
    /// would hold exits back until that future.
    mutating func handleStatus(gateway: String, payload: [UInt8], receivedAt: Double, retained: Bool) -> Outcome {
        guard payload.count <= settings.maxPayloadBytes else { return reject(.oversize, gateway: gateway, at: receivedAt) }
        guard let g = site.gatewayIndex(gateway) else { return reject(.unknownGateway, gateway: gateway, at: receivedAt) }
        let status: GatewayStatus
        do { status = try StatusDecoder.decode(payload) } catch { return reject(error.reason, gateway: gateway, at: receivedAt) }
        guard status.gateway == gateway else { return reject(.gatewayMismatch, gateway: gateway, at: receivedAt) }
        let offset = clocks[gateway]?.offset ?? 0
        let reported = status.t.map { $0 + offset }
        let at: Double
        let summary = StatusSummary(state: status.state, boot: status.boot, reportedAt: status.t)
        if retained {
            // The status we recorded last, delivered again on (re)subscribe: already recorded and
            // applied, so nothing to do (feeding it again would move the gateway's health and the
            // engine would diverge from a run that was never restarted).
            if let known = lastStatus[gateway], known.sameState(as: summary), let t = status.t, let seen = known.reportedAt,
               abs(t - seen) < 0.001 {
                return .status(gateway: gateway)
            }
            guard let reported, reported.isFinite, reported >= ClockSanity.earliestPlausible, reported <= receivedAt + 5 else {
                // No usable time: its age is unknown, so it is not fed to the engine.
                if !(lastStatus[gateway]?.sameState(as: summary) ?? false) {
                    lastStatus[gateway] = summary
                    pending.statuses.append(.init(gateway: gateway, receivedAt: receivedAt, status: status, payload: payload))
                }
                return .status(gateway: gateway)
            }
            at = reported
        } else {
            at = receivedAt
        }
        lastStatus[gateway] = summary
        pending.statuses.append(.init(gateway: gateway, receivedAt: at, status: status, payload: payload))
        if !retained {
            reorder.setOnline(gateway, status.state == .online)
        } else if status.state == .offline {
            reorder.caughtUp(gateway)  // offline when we (re)subscribed: nothing to wait for
        }
        if !retained || at >= latest {
            // The engine runs in evidence time: a status carries no evidence of its own, so it
            // applies at the newest evidence fused so far (never at the receive clock, which can
            // be far ahead of the batches' times — a backlog from a spool, or a replayed venue).
            let evidence = latest.isFinite ? latest : min(at, receivedAt)
            outputs += engine.gatewayStatus(g, online: status.state == .online, at: evidence)
            route()
        }
        return .status(gateway: gateway)
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
