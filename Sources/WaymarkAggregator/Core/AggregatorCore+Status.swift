import Foundation
import WaymarkCore
import WaymarkFusion

extension AggregatorCore {
    /// A gateway's retained status: recorded for the gateway health report, and fed to the engine
    /// (offline makes the regions that depend on the gateway `unknown`).
    ///
    /// A retained status delivered on subscribe may be old: it is recorded at its own (corrected)
    /// time, so a re-delivery after a restart hits the same row, and it is not fed to the engine
    /// unless it is newer than the evidence processed so far.
    mutating func handleStatus(gateway: String, payload: [UInt8], receivedAt: Double, retained: Bool) -> Outcome {
        guard payload.count <= settings.maxPayloadBytes else { return reject(.oversize, gateway: gateway, at: receivedAt) }
        guard let g = site.gatewayIndex(gateway) else { return reject(.unknownGateway, gateway: gateway, at: receivedAt) }
        guard let status = try? JSONDecoder().decode(GatewayStatus.self, from: Data(payload)) else {
            return reject(.malformed, gateway: gateway, at: receivedAt)
        }
        guard status.gateway == gateway else { return reject(.gatewayMismatch, gateway: gateway, at: receivedAt) }
        let offset = clocks[gateway]?.offset ?? 0
        let reported = status.t.map { $0 + offset }
        let at: Double
        if retained {
            guard let reported, reported.isFinite, reported >= ClockSanity.earliestPlausible, reported <= receivedAt + 5 else {
                return .status(gateway: gateway)  // an old retained status without a usable time: nothing to record
            }
            at = reported
        } else {
            at = receivedAt
        }
        pending.statuses.append(.init(gateway: gateway, receivedAt: at, status: status))
        if !retained { reorder.setOnline(gateway, status.state == .online) }
        if !retained || at >= latest {
            let evidence = max(latest, min(at, receivedAt))
            outputs += engine.gatewayStatus(g, online: status.state == .online, at: evidence)
            route()
        }
        return .status(gateway: gateway)
    }
}
