import WaymarkCore

/// Whether a foreign receiver is up, from its own last-will topic and from its readings: what the
/// bridge publishes as its gateway's status.
///
/// A receiver that says `offline` is offline until it says `online` or a reading arrives from it
/// (its retained last will can be older than its restart). A receiver whose status is unknown —
/// no status topic, or nothing retained on it — counts as online while readings arrive, and as
/// offline once it has been silent for `silenceS`: the bridge cannot tell a quiet room from a
/// dead node, and `unknown` regions are the honest answer.
public struct ReceiverLiveness: Sendable, Equatable {
    public enum Said: Sendable, Equatable { case online, offline, unknown }

    public private(set) var said: Said = .unknown
    public private(set) var lastReadingAt: Double?
    public let silenceS: Double

    public init(silenceS: Double) { self.silenceS = silenceS }

    /// The receiver's status message; false when it is neither `online` nor `offline`.
    public mutating func status(_ payload: [UInt8]) -> Bool {
        let text = String(decoding: payload, as: UTF8.self).trimmingWhitespace().lowercased()
        switch text {
        case "online", "\"online\"": said = .online
        case "offline", "\"offline\"": said = .offline
        default: return false
        }
        return true
    }

    public mutating func reading(at t: Double) {
        lastReadingAt = max(lastReadingAt ?? t, t)
        if said == .offline { said = .unknown }
    }

    /// The gateway's status at `now`.
    public func state(at now: Double) -> GatewayStatus.State {
        switch said {
        case .online: return .online
        case .offline: return .offline
        case .unknown:
            guard let last = lastReadingAt else { return .offline }
            return now - last <= silenceS ? .online : .offline
        }
    }
}

extension String {
    /// Without leading and trailing ASCII white space (WaymarkBridge has no Foundation).
    func trimmingWhitespace() -> String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
