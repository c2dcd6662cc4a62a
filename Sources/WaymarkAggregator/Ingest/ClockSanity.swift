/// Per-gateway clock checking (DESIGN.md §6): a Raspberry Pi has no real-time clock, so a
/// gateway's clock can be off by seconds (drift), hours (wrong zone set up by hand) or decades
/// (booted without network: 1970).
///
/// For each batch the skew `receive time − window end` is recorded. Delivery delay only ever
/// adds to it, and a backlog from a spool adds a lot, so the clock offset shows as a *stable* skew:
/// when the last `stableSamples` skews lie within `stableSpreadS` of each other and their median
/// is beyond `toleranceS`, that median becomes the gateway's offset and is added to every time of
/// its batches (a backlog never looks stable: its skews fall by one window per batch). Batches
/// whose corrected times are still absurd are rejected.
public struct ClockSanity: Sendable {
    public struct Parameters: Sendable, Equatable {
        /// Skews within this many seconds are normal delivery delay: no correction.
        public var toleranceS: Double = 2
        /// Largest offset that is corrected; a larger stable offset gets the batches rejected.
        public var maxCorrectionS: Double = 86_400
        /// Batches whose (corrected) end is older than this are rejected.
        public var maxAgeS: Double = 7 * 86_400
        /// Corrected times further than this in the future are rejected.
        public var maxFutureS: Double = 5
        public var stableSamples = 8
        public var stableSpreadS: Double = 1
        public init() {}

        /// For batches recorded earlier and sent at once (tests, benchmarks): no skew is corrected
        /// and nothing is too old.
        public static var recorded: Self {
            var p = Self()
            p.toleranceS = 1e9
            p.maxAgeS = 1e10
            return p
        }
    }

    /// What to do with one batch.
    public enum Verdict: Equatable, Sendable {
        /// Use the batch with `offset` added to its times (0: as sent).
        case accept(offset: Double)
        case reject
    }

    /// Earliest plausible time (2020-01-01): anything before is a clock that was never set.
    public static let earliestPlausible = 1_577_836_800.0

    public let parameters: Parameters
    private var samples: [Double] = []
    /// The offset currently applied (seconds to add to the gateway's times).
    public private(set) var offset: Double = 0

    public init(parameters: Parameters = Parameters()) { self.parameters = parameters }

    /// Records the batch's skew and judges it. `receivedAt` is the aggregator's clock.
    public mutating func judge(windowStart: Double, windowEnd: Double, receivedAt: Double) -> Verdict {
        let skew = receivedAt - windowEnd
        samples.append(skew)
        if samples.count > parameters.stableSamples { samples.removeFirst(samples.count - parameters.stableSamples) }
        if samples.count == parameters.stableSamples, let lo = samples.min(), let hi = samples.max(),
           hi - lo <= parameters.stableSpreadS {
            let median = samples.sorted()[samples.count / 2]
            if abs(median) <= parameters.toleranceS {
                offset = 0
            } else if abs(median) <= parameters.maxCorrectionS {
                offset = median
            }
        }
        let start = windowStart + offset, end = windowEnd + offset
        if start < Self.earliestPlausible || end > receivedAt + parameters.maxFutureS || end < receivedAt - parameters.maxAgeS {
            return .reject
        }
        return .accept(offset: offset)
    }

    /// Restores a saved offset (from the aggregator checkpoint).
    public mutating func restore(offset: Double) { self.offset = offset }
}
