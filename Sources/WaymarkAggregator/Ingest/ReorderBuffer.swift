/// Holds accepted batches briefly and releases them in order of evidence (window) time, so that
/// a gateway that falls behind does not make the engine see its evidence after newer evidence
/// from the others.
///
/// The event-time watermark is the minimum, over the *active* sources (gateways), of the latest
/// window end each has sent: no active source will send anything older, so every held item up to
/// the watermark is released. A source is active while it is online and its evidence is within
/// `maxLatenessS` of the most advanced source's, in evidence time. So a gateway that stalls or
/// falls behind drops out once the others are `maxLatenessS` ahead, and one slow gateway cannot
/// block the others; and since the receive clock plays no part in it, a pause of the whole stream
/// (the broker, the network, the aggregator restarting) or a replay at another speed releases the
/// same items in the same order. As a safety net no item is held longer than `maxLatenessS` on the
/// receive clock. An item older than what was already released goes in at once and is counted in
/// `late`. Items with equal window ends are released in order of their source's `rank` (the
/// aggregator passes the gateway's position in the site file), then of arrival.
///
/// A source can also be *catching up* (`holdForCatchUp`): after a gap in its sequence, the missing
/// evidence is known to be on its way (asked for again); after a restart, what it sent meanwhile
/// is. Until it has caught up (`progressed`: its evidence is back within `maxLatenessS` of the
/// others'; or `caughtUp`) or
/// its deadline passes (counted in `catchUpTimeouts`), the watermark stays at its latest evidence
/// however far the others are ahead, and the lateness bound does not release anything newer: the
/// engine's clock waits for it, the way a stream processor holds its watermark for a partition that
/// is being replayed.
///
/// Items of one source are released in the order they were inserted (their order key never goes
/// below the source's previous one), which keeps per-gateway sequence marks cumulative. Pure: the
/// clock is passed in. `maxLatenessS` 0 turns holding off (and catching up with it).
public struct ReorderBuffer<Item: Sendable>: Sendable {
    struct Entry: Sendable {
        var order: Double
        var rank: Int
        var arrival: Int
        var heldAt: Double
        var source: String
        var item: Item
    }

    struct Source: Sendable {
        var latestEnd = -Double.infinity
        var online = true
        var lastOrder = -Double.infinity
        var held = 0
        /// Receive-clock deadline of a catch-up (−∞: not catching up).
        var catchUpUntil = -Double.infinity
    }

    /// Longest an item is held, and how long a silent source still counts for the watermark (s).
    public let maxLatenessS: Double
    /// Held items, sorted by (order, arrival).
    var entries: [Entry] = []
    var sources: [String: Source] = [:]
    var arrivals = 0
    /// The highest order released so far.
    public private(set) var releasedUpTo = -Double.infinity
    /// The watermark of the last `release`: everything up to it from every active source has been
    /// released (−∞ before the first; +∞ while no source is active).
    public private(set) var releasedWatermark = -Double.infinity
    /// Items that arrived older than what had already been released (they went in at once).
    public private(set) var late = 0
    /// Catch-ups that ended by their deadline rather than by the source catching up.
    public private(set) var catchUpTimeouts = 0
    /// Sources catching up now.
    public private(set) var catchingUp = 0

    public init(maxLatenessS: Double) { self.maxLatenessS = max(0, maxLatenessS) }

    /// Items held now.
    public var count: Int { entries.count }

    /// Whether items of `source` are held (a later item of it must then wait behind them).
    public func isHolding(_ source: String) -> Bool { (sources[source]?.held ?? 0) > 0 }

    /// Adds an item whose evidence ends at `windowEnd` (nil: no evidence, only ordered behind the
    /// source's held items) received at `now`; returns the items due now, in release order.
    public mutating func insert(_ item: Item, source: String, rank: Int = 0, windowEnd: Double?, at now: Double) -> [Item] {
        var s = sources[source] ?? Source()
        if let windowEnd { s.latestEnd = max(s.latestEnd, windowEnd) }
        let order = max(windowEnd ?? -Double.infinity, s.lastOrder)
        if windowEnd != nil && order < releasedUpTo && s.held == 0 {
            late += 1
            sources[source] = s
            return [item] + release(at: now)
        }
        if maxLatenessS == 0 && s.held == 0 {
            sources[source] = s
            releasedUpTo = max(releasedUpTo, order)
            return [item]
        }
        s.lastOrder = order
        s.held += 1
        sources[source] = s
        arrivals += 1
        let entry = Entry(order: order, rank: rank, arrival: arrivals, heldAt: now, source: source, item: item)
        let index = entries.partitioningIndex { ($0.order, $0.rank, $0.arrival) > (order, rank, arrivals) }
        entries.insert(entry, at: index)
        return release(at: now)
    }

    /// Adds an item that happened at `time` but is no evidence of the source's progress (a
    /// status): released in order of `time` among the others, without moving the source's latest
    /// evidence or the order its next item must keep. Returns the items due now.
    public mutating func insertEvent(_ item: Item, source: String, rank: Int = 0, time: Double, at now: Double) -> [Item] {
        if (time < releasedUpTo && (sources[source]?.held ?? 0) == 0) || maxLatenessS == 0 {
            return [item] + release(at: now)
        }
        sources[source, default: Source()].held += 1
        arrivals += 1
        let entry = Entry(order: time, rank: rank, arrival: arrivals, heldAt: now, source: source, item: item)
        let index = entries.partitioningIndex { ($0.order, $0.rank, $0.arrival) > (time, rank, arrivals) }
        entries.insert(entry, at: index)
        return release(at: now)
    }

    /// Marks a source online or offline (an offline source does not hold the watermark back, nor
    /// is it waited for to catch up).
    public mutating func setOnline(_ source: String, _ online: Bool) {
        sources[source, default: Source()].online = online
        if !online { caughtUp(source) }
    }

    /// Holds the watermark at `source`'s latest evidence (at least `latestEnd`, when given) until
    /// it catches up or `deadline` (receive clock) passes. No effect when holding is off.
    public mutating func holdForCatchUp(_ source: String, latestEnd: Double? = nil, until deadline: Double) {
        guard maxLatenessS > 0 else { return }
        var s = sources[source] ?? Source()
        if let latestEnd { s.latestEnd = max(s.latestEnd, latestEnd) }
        if s.catchUpUntil == -Double.infinity { catchingUp += 1 }
        s.catchUpUntil = max(s.catchUpUntil, deadline)
        sources[source] = s
    }

    /// `source` delivered evidence: once it is within `maxLatenessS` of the most advanced online
    /// source it has caught up (a backlog that arrives batch by batch keeps it catching up until
    /// its evidence reaches the others').
    public mutating func progressed(_ source: String) {
        guard catchingUp > 0, let s = sources[source], s.catchUpUntil > -Double.infinity else { return }
        var leader = -Double.infinity
        for x in sources.values where x.online { leader = max(leader, x.latestEnd) }
        if s.latestEnd >= leader - maxLatenessS { caughtUp(source) }
    }

    /// `source`'s awaited evidence arrived: it no longer holds the watermark beyond the usual.
    public mutating func caughtUp(_ source: String) {
        guard catchingUp > 0, var s = sources[source], s.catchUpUntil > -Double.infinity else { return }
        s.catchUpUntil = -Double.infinity
        sources[source] = s
        catchingUp -= 1
    }


    /// The event-time watermark at `now` (+∞ when no source is active).
    public func watermark(at now: Double) -> Double {
        var leader = -Double.infinity
        for s in sources.values where s.online { leader = max(leader, s.latestEnd) }
        var w = Double.infinity
        for s in sources.values {
            if s.catchUpUntil > now {
                w = min(w, s.latestEnd)
            } else if s.online && s.latestEnd > -Double.infinity && s.latestEnd >= leader - maxLatenessS {
                w = min(w, s.latestEnd)
            }
        }
        return w
    }

    /// Restores where a source stood (after a restart): its latest window end (also the order its
    /// next item must not go below) and whether it is online.
    public mutating func restore(source: String, latestEnd: Double, online: Bool) {
        var s = sources[source] ?? Source()
        s.latestEnd = max(s.latestEnd, latestEnd)
        s.lastOrder = max(s.lastOrder, latestEnd)
        s.online = online
        sources[source] = s
        releasedUpTo = max(releasedUpTo, latestEnd)
    }

    /// The held items that are due at `now`: up to the watermark, and every item held for
    /// `maxLatenessS` or longer together with everything ordered before it — except, while a
    /// source catches up, what is newer than that source's latest evidence.
    public mutating func release(at now: Double) -> [Item] {
        if catchingUp > 0 { expireCatchUps(at: now) }
        let w = watermark(at: now)
        releasedWatermark = w
        guard !entries.isEmpty else { return [] }
        var cap = Double.infinity
        if catchingUp > 0 {
            for s in sources.values where s.catchUpUntil > now { cap = min(cap, s.latestEnd) }
        }
        var cut = 0
        for (i, e) in entries.enumerated() where e.order <= w || (now - e.heldAt >= maxLatenessS && e.order <= cap) { cut = i + 1 }
        return take(cut)
    }

    mutating func expireCatchUps(at now: Double) {
        for (id, s) in sources where s.catchUpUntil > -Double.infinity && s.catchUpUntil <= now {
            sources[id]?.catchUpUntil = -Double.infinity
            catchingUp -= 1
            catchUpTimeouts += 1
        }
    }

    /// Every held item, in order (shutdown).
    public mutating func releaseAll() -> [Item] { take(entries.count) }

    mutating func take(_ n: Int) -> [Item] {
        guard n > 0 else { return [] }
        let out = entries[..<n]
        for e in out {
            sources[e.source]?.held -= 1
            releasedUpTo = max(releasedUpTo, e.order)
        }
        entries.removeFirst(n)
        return out.map(\.item)
    }
}

extension Array {
    /// The first index whose element satisfies `belongs` (elements must be partitioned by it).
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if belongs(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
