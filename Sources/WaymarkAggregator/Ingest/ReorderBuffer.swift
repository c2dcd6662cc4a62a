/// Holds accepted batches briefly and releases them in order of evidence (window) time, so that
/// a gateway that falls behind does not make the engine see its evidence after newer evidence
/// from the others.
///
/// The event-time watermark is the minimum, over sources (gateways) that are online and sent a
/// batch within the last `maxLatenessS` seconds, of the latest window end each has sent: no
/// active source will send anything older, so every held item up to the watermark is released.
/// A source that stalls drops out of the minimum after `maxLatenessS`, and no item is held longer
/// than `maxLatenessS` (receive clock), so one slow gateway cannot block the others. An item older
/// than what was already released goes in at once and is counted in `late`.
///
/// Items of one source are released in the order they were inserted (their order key never goes
/// below the source's previous one), which keeps per-gateway sequence marks cumulative. Pure: the
/// clock is passed in. `maxLatenessS` 0 turns holding off.
public struct ReorderBuffer<Item: Sendable>: Sendable {
    struct Entry: Sendable {
        var order: Double
        var arrival: Int
        var heldAt: Double
        var source: String
        var item: Item
    }

    struct Source: Sendable {
        var latestEnd = -Double.infinity
        var lastSeen = -Double.infinity
        var online = true
        var lastOrder = -Double.infinity
        var held = 0
    }

    /// Longest an item is held, and how long a silent source still counts for the watermark (s).
    public let maxLatenessS: Double
    /// Held items, sorted by (order, arrival).
    var entries: [Entry] = []
    var sources: [String: Source] = [:]
    var arrivals = 0
    /// The highest order released so far.
    public private(set) var releasedUpTo = -Double.infinity
    /// Items that arrived older than what had already been released (they went in at once).
    public private(set) var late = 0

    public init(maxLatenessS: Double) { self.maxLatenessS = max(0, maxLatenessS) }

    /// Items held now.
    public var count: Int { entries.count }

    /// Whether items of `source` are held (a later item of it must then wait behind them).
    public func isHolding(_ source: String) -> Bool { (sources[source]?.held ?? 0) > 0 }

    /// Adds an item whose evidence ends at `windowEnd` (nil: no evidence, only ordered behind the
    /// source's held items) received at `now`; returns the items due now, in release order.
    public mutating func insert(_ item: Item, source: String, windowEnd: Double?, at now: Double) -> [Item] {
        var s = sources[source] ?? Source()
        s.lastSeen = max(s.lastSeen, now)
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
        let entry = Entry(order: order, arrival: arrivals, heldAt: now, source: source, item: item)
        let index = entries.partitioningIndex { ($0.order, $0.arrival) > (order, arrivals) }
        entries.insert(entry, at: index)
        return release(at: now)
    }

    /// Marks a source online or offline (an offline source does not hold the watermark back).
    public mutating func setOnline(_ source: String, _ online: Bool) {
        sources[source, default: Source()].online = online
    }

    /// The event-time watermark at `now` (+∞ when no source is active).
    public func watermark(at now: Double) -> Double {
        var w = Double.infinity
        for s in sources.values where s.online && now - s.lastSeen <= maxLatenessS && s.latestEnd > -Double.infinity {
            w = min(w, s.latestEnd)
        }
        return w
    }

    /// The held items that are due at `now`: up to the watermark, and every item held for
    /// `maxLatenessS` or longer together with everything ordered before it.
    public mutating func release(at now: Double) -> [Item] {
        guard !entries.isEmpty else { return [] }
        let w = watermark(at: now)
        var cut = 0
        for (i, e) in entries.enumerated() where e.order <= w || now - e.heldAt >= maxLatenessS { cut = i + 1 }
        return take(cut)
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
