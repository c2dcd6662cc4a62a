/// What becomes of a webhook attempt, and when the next one is due: the rules of
/// docs/notifications.md ("Webhooks") in one place, without I/O.
public struct WebhookRetryPolicy: Sendable, Equatable {
    public var initialS: Double
    public var maxS: Double
    public var giveUpAfterS: Double

    public init(initialS: Double, maxS: Double, giveUpAfterS: Double) {
        self.initialS = initialS
        self.maxS = maxS
        self.giveUpAfterS = giveUpAfterS
    }

    public init(_ settings: WebhookSettings) {
        self.init(initialS: settings.retryInitialS, maxS: settings.retryMaxS, giveUpAfterS: settings.giveUpAfterS)
    }

    public enum Decision: Equatable, Sendable {
        case delivered
        /// Try again at this time (Unix seconds).
        case retry(at: Double)
        /// Give up: `reason` says why.
        case failed(reason: String)
    }

    /// The wait after failed attempt number `attempt` (1-based): initial, doubling, capped. With
    /// a `jitterKey` (the notification's id) the wait is spread over 75–125 % of that, by a hash
    /// of the key and the attempt: notifications that failed together (a receiver that was down)
    /// do not all come back in the same second, and the spread is the same on every run.
    public func backoff(afterAttempt attempt: Int, jitterKey: String? = nil) -> Double {
        let doubled = initialS * Double(1 << min(max(attempt - 1, 0), 30))
        let wait = min(maxS, doubled)
        guard let jitterKey else { return wait }
        return wait * (0.75 + 0.5 * Self.unitHash(jitterKey, attempt))
    }

    /// A number in [0, 1) from `key` and `attempt` (FNV-1a, then a 64-bit mix).
    static func unitHash(_ key: String, _ attempt: Int) -> Double {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        h ^= UInt64(truncatingIfNeeded: attempt) &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 33; h &*= 0xff51_afd7_ed55_8ccd; h ^= h >> 33
        return Double(h >> 11) / Double(UInt64(1) << 53)
    }

    /// Attempt number `attempt` of a notification stored at `storedAt` ended at `now` with HTTP
    /// `status` (nil: no response — refused, timed out, TLS). 2xx delivers. A 4xx other than 408
    /// (timeout) and 429 (too many requests) is the receiver refusing this request, which
    /// resending will not change. Anything else is retried after the backoff (spread by
    /// `jitterKey`, see `backoff`), until `giveUpAfterS` after it was stored.
    public func decide(status: Int?, attempt: Int, storedAt: Double, now: Double, jitterKey: String? = nil) -> Decision {
        if let status, (200..<300).contains(status) { return .delivered }
        if let status, (400..<500).contains(status), status != 408, status != 429 {
            return .failed(reason: "HTTP \(status): the receiver refused the request; fix it and set the row's webhook_status back to 'pending' to resend at the next start")
        }
        let next = now + backoff(afterAttempt: attempt, jitterKey: jitterKey)
        if next - storedAt > giveUpAfterS {
            return .failed(reason: "still failing \(Int(now - storedAt)) s after the notification (webhooks.give_up_after_s \(Int(giveUpAfterS)))")
        }
        return .retry(at: next)
    }
}
