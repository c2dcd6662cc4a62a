/// Where the scanner is, reported through `HCIScanner.start`'s `onStateChange` and `state`.
public enum ScanState: Hashable, Sendable, CustomStringConvertible {
    /// Not started yet.
    case idle
    /// Scanning `adapter` with the given command set.
    case scanning(adapter: String, mode: ScanMode)
    /// Scanning stopped on its own (adapter gone, down, reset, taken by another scanner); the
    /// scanner is retrying. `attempt` counts from 1.
    case recovering(BluetoothError, attempt: Int)
    /// `stop()` finished. Carries the error if scanning could not be switched off cleanly (for
    /// example because the adapter had already gone).
    case stopped(BluetoothError?)

    /// One word for status payloads and metrics labels: idle, scanning, recovering, stopped.
    public var name: String {
        switch self {
        case .idle: "idle"
        case .scanning: "scanning"
        case .recovering: "recovering"
        case .stopped: "stopped"
        }
    }

    public var description: String {
        switch self {
        case .idle: "idle"
        case .scanning(let adapter, let mode): "scanning \(adapter) (\(mode.rawValue))"
        case .recovering(let error, let attempt): "recovering (attempt \(attempt)): \(error)"
        case .stopped(nil): "stopped"
        case .stopped(let error?): "stopped, but could not disable scanning: \(error)"
        }
    }
}

/// How the scanner notices trouble and retries.
public struct RecoveryPolicy: Hashable, Sendable {
    /// Delay before the first reopen attempt, in seconds.
    public var initialDelay: Double
    /// Upper bound of the doubling delay, in seconds.
    public var maxDelay: Double
    /// How often the adapter's presence and up state are checked while scanning, in seconds.
    public var healthCheckInterval: Double
    /// The longest `stop()` waits for the read loop to notice, in milliseconds.
    public var pollTimeoutMs: Int32

    public init(initialDelay: Double = 0.5, maxDelay: Double = 10, healthCheckInterval: Double = 1, pollTimeoutMs: Int32 = 200) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.healthCheckInterval = healthCheckInterval
        self.pollTimeoutMs = pollTimeoutMs
    }

    /// The wait before reopen attempt `attempt` (1-based): initial × 2^(attempt−1), capped.
    public func delay(attempt: Int) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        return min(maxDelay, initialDelay * pow2(exponent))
    }

    private func pow2(_ e: Double) -> Double {
        var v = 1.0
        for _ in 0..<Int(e) { v *= 2 }
        return v
    }
}
