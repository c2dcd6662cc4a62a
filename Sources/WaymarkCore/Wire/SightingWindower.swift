/// Aggregates tracked sightings per device per fixed window (DESIGN.md §2) and numbers the
/// resulting batches. Pure: time comes only from the caller.
///
/// Windows are aligned to multiples of ``window`` seconds of Unix time. A sighting later than the
/// open window closes it (the batch is returned) and opens the window that contains it; a sighting
/// earlier than the open window (clock step back, reordered input) is counted into the open window
/// and counted in ``lateSightings``. Windows without tracked sightings produce no batch, unless
/// ``emptyWindows``: then the clock (``advance(to:)``) keeps a window open at all times and every
/// window it closes is a batch, empty when nothing was heard, so that the aggregator knows the
/// gateway has nothing more for that window instead of waiting for it (docs/aggregator.md, "Live
/// latency").
public struct SightingWindower: Sendable {
    public let window: Double
    public let gateway: String
    public let boot: String
    /// Whether windows without sightings are batches too. It may change at any time: a window
    /// that closes while it is off produces no batch when empty (no sequence number is used).
    public var emptyWindows: Bool
    /// The seq of the next batch (1 for the first batch of a boot).
    public private(set) var nextSeq: UInt64 = 1
    public private(set) var lateSightings = 0

    private var start: Double?
    private var entries: [Accumulator] = []
    private var indexByDevice: [DeviceID: Int] = [:]

    struct Accumulator {
        var device: DeviceID
        var count: Int
        var sum: Double
        var max: Double
        var last: Double
        var tx: Double?
        var first: Double
        var lastTime: Double
        var telemetry: SightingBatch.Telemetry?
    }

    public init(window: Double, gateway: String, boot: String, firstSeq: UInt64 = 1, emptyWindows: Bool = false) {
        precondition(window > 0, "window must be positive")
        self.window = window
        self.gateway = gateway
        self.boot = boot
        self.nextSeq = firstSeq
        self.emptyWindows = emptyWindows
    }

    /// The open window's start, or nil when no sighting is pending.
    public var openWindowStart: Double? { start }
    /// Devices in the open window.
    public var pendingDevices: Int { entries.count }

    /// Adds one sighting; returns the batch of the window it closed, if any.
    public mutating func add(device: DeviceID, rssi: Double, tx: Double?, time: Double) -> SightingBatch? {
        let closed = roll(to: time)
        if let i = indexByDevice[device] {
            entries[i].count += 1
            entries[i].sum += rssi
            if rssi > entries[i].max { entries[i].max = rssi }
            entries[i].last = rssi
            if let tx { entries[i].tx = tx }
            if time > entries[i].lastTime { entries[i].lastTime = time }
            if time < entries[i].first { entries[i].first = time }
        } else {
            indexByDevice[device] = entries.count
            entries.append(Accumulator(device: device, count: 1, sum: rssi, max: rssi, last: rssi, tx: tx,
                                       first: time, lastTime: time, telemetry: nil))
        }
        return closed
    }

    /// Attaches telemetry to a device already in the open window (ignored otherwise: telemetry
    /// alone is not a sighting).
    public mutating func attach(telemetry: SightingBatch.Telemetry, to device: DeviceID, time: Double) -> SightingBatch? {
        let closed = roll(to: time)
        if let i = indexByDevice[device] { entries[i].telemetry = telemetry }
        return closed
    }

    /// Closes the open window when `now` has reached its end (a live clock tick). With
    /// ``emptyWindows`` it also opens the window containing `now`, so that the next tick closes it
    /// even when nothing is heard (after a stall longer than a window only the latest is sent).
    public mutating func advance(to now: Double) -> SightingBatch? {
        guard let start else {
            if emptyWindows { self.start = aligned(now) }
            return nil
        }
        guard now >= start + window else { return nil }
        let batch = close()
        if emptyWindows { self.start = aligned(now) }
        return batch
    }

    private func aligned(_ time: Double) -> Double { (time / window).rounded(.down) * window }

    /// Closes the open window regardless of time (shutdown, end of replay).
    public mutating func flush() -> SightingBatch? {
        start == nil ? nil : close()
    }

    private mutating func roll(to time: Double) -> SightingBatch? {
        let aligned = aligned(time)
        guard let current = start else {
            start = aligned
            return nil
        }
        if time >= current + window {
            let batch = close()
            start = aligned
            return batch
        }
        if time < current { lateSightings += 1 }
        return nil
    }

    private mutating func close() -> SightingBatch? {
        guard let s = start else { return nil }
        start = nil
        guard !entries.isEmpty || emptyWindows else { return nil }
        let batch = SightingBatch(
            gateway: gateway, boot: boot, seq: nextSeq, start: s, end: s + window,
            sightings: entries.map { a in
                SightingBatch.Entry(device: a.device, count: a.count, rssiMax: a.max, rssiMean: a.sum / Double(a.count),
                                    rssiLast: a.last, tx: a.tx, first: a.first, last: a.lastTime, telemetry: a.telemetry)
            })
        nextSeq += 1
        entries.removeAll(keepingCapacity: true)
        indexByDevice.removeAll(keepingCapacity: true)
        return batch
    }
}
