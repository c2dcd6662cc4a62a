/// When the writer thread prepares and retires the partitions — raw sightings' days
/// (`sightings_YYYYMMDD`) and the history's months (`visits_YYYYMM` …, schema 0011) with their
/// retention: at start, then once per UTC day while running (days are made two days ahead,
/// months 40 days ahead, so a missed midnight does not matter), and after a failure again
/// `retryS` later.
struct PartitionUpkeep: Sendable {
    static let day = 86_400.0
    /// UTC day number of the last successful upkeep, or nil before the first.
    private(set) var lastDay: Int?
    private var retryAt = -Double.infinity
    let retryS: Double

    init(retryS: Double = 600) { self.retryS = retryS }

    static func dayNumber(_ t: Double) -> Int { Int((t / day).rounded(.down)) }

    /// Whether an upkeep should run at `now` (Unix seconds).
    func isDue(at now: Double) -> Bool {
        guard now >= retryAt else { return false }
        return lastDay.map { Self.dayNumber(now) != $0 } ?? true
    }

    mutating func succeeded(at now: Double) {
        lastDay = Self.dayNumber(now)
        retryAt = -.infinity
    }

    mutating func failed(at now: Double) { retryAt = now + retryS }
}
