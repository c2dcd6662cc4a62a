import Foundation
import WaymarkCore

/// The shared `LiveVenue`: written by the MQTT network thread, read by request handlers.
///
/// `@unchecked Sendable`: every access to `venue` goes through `lock`; the critical sections only
/// copy or update a value type.
public final class LiveHub: @unchecked Sendable {
    private let lock = NSLock()
    private var venue: LiveVenue
    private var loggedCauses: Set<String> = []

    public init(site: Site, prefix: String) {
        venue = LiveVenue(site: site, prefix: prefix)
    }

    public var topics: [String] { snapshot().topics }

    /// Applies a message; returns the cause of a rejection the first time that cause is seen
    /// (for one log line per cause), nil otherwise.
    public func apply(topic: String, payload: [UInt8], retained: Bool, receivedAt: Double) -> String? {
        lock.lock()
        defer { lock.unlock() }
        guard let cause = venue.apply(topic: topic, payload: payload, retained: retained, receivedAt: receivedAt) else { return nil }
        return loggedCauses.insert(cause).inserted ? cause : nil
    }

    public func snapshot() -> LiveVenue {
        lock.lock()
        defer { lock.unlock() }
        return venue
    }

    public var version: Int {
        lock.lock()
        defer { lock.unlock() }
        return venue.version
    }
}
