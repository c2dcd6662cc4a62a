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

    /// The wait after failed attempt number `attempt` (1-based): initial, doubling, capped.
    public func backoff(afterAttempt attempt: Int) -> Double {
        let doubled = initialS * Double(1 << min(max(attempt - 1, 0), 30))
        return min(maxS, doubled)
    }

    /// Attempt number `attempt` of a notification stored at `storedAt` ended at `now` with HTTP
    /// `status` (nil: no response — refused, timed out, TLS). 2xx delivers. A 4xx other than 408
    /// (timeout) and 429 (too many requests) is the receiver refusing this request, which
    /// resending will not change. Anything else is retried after the backoff, until
    /// `giveUpAfterS` after it was stored.
    public func decide(status: Int?, attempt: Int, storedAt: Double, now: Double) -> Decision {
        if let status, (200..<300).contains(status) { return .delivered }
        if let status, (400..<500).contains(status), status != 408, status != 429 {
            return .failed(reason: "HTTP \(status): the receiver refused the request; fix it and set the row's webhook_status back to 'pending' to resend at the next start")
        }
        let next = now + backoff(afterAttempt: attempt)
        if next - storedAt > giveUpAfterS {
            return .failed(reason: "still failing \(Int(now - storedAt)) s after the notification (webhooks.give_up_after_s \(Int(giveUpAfterS)))")
        }
        return .retry(at: next)
    }
}
