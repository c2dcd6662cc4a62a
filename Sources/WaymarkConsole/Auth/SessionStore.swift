import Foundation

/// Signed-in browsers: a random session id (in an HttpOnly cookie) with its expiry, in memory
/// (a restart signs everyone out).
///
/// `@unchecked Sendable`: `sessions` is only touched under `lock`.
public final class SessionStore: @unchecked Sendable {
    public static let cookieName = "waymark_session"
    private let lock = NSLock()
    private var sessions: [String: Double] = [:]
    public let lifetimeS: Double

    public init(lifetimeS: Double) {
        self.lifetimeS = lifetimeS
    }

    /// A new session id, valid for `lifetimeS` from `now`.
    public func open(now: Double = Date().timeIntervalSince1970) -> String {
        var rng = SystemRandomNumberGenerator()
        let id = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &rng)) }.joined()
        lock.lock()
        defer { lock.unlock() }
        sessions = sessions.filter { $0.value > now }
        sessions[id] = now + lifetimeS
        return id
    }

    public func isValid(_ id: String, now: Double = Date().timeIntervalSince1970) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let expiry = sessions[id] else { return false }
        if expiry <= now {
            sessions[id] = nil
            return false
        }
        return true
    }

    public func close(_ id: String) {
        lock.lock()
        defer { lock.unlock() }
        sessions[id] = nil
    }
}
