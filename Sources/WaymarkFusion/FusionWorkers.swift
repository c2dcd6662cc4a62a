import Dispatch
public import WaymarkCore

/// Several fusion engines side by side, so that one aggregator uses every core (issue 18,
/// DESIGN.md §7): each device belongs to one worker, chosen by a fixed hash of its id
/// (`worker(of:count:)`), and only that worker's engine ever sees its readings, so each device's
/// evidence is fused in order. Gateway status goes to every worker; an edge batch is split by
/// worker, and a worker with no entries in it takes it as its gateway's heartbeat.
///
/// Each worker is a whole `FusionEngine` with its own self-calibration, learned from its own
/// devices, as each aggregator of a sharded installation learns from its shard. The results are
/// therefore a function of the input and the number of workers: the same input with the same count
/// gives the same output whatever the threads do (a batch's parts run in parallel, then their
/// outputs are taken worker by worker), and `waymark replay --workers N` reproduces an aggregator
/// running N. With one worker it is exactly the single engine.
///
/// Device handles are global: a worker's handle `h` is `h × count + worker`.
public struct FusionWorkers: Sendable {
    public let site: Site
    public let count: Int
    /// The site's shard count when this is one aggregator of several (`ShardLayout`): the devices of
    /// one shard share their hash modulo it, so the worker is taken from the hash divided by it
    /// (with 16 shards and 8 workers, `hash mod 8` would put all of an aggregator's shard-k devices
    /// on worker k mod 8). 1 unsharded.
    public let shards: Int
    var workers: [Worker]
    /// Where each entry of the batch being fed went: position in its worker's part × count + worker.
    private var places: [Int32] = []

    /// Below this many entries a batch's parts are fed one after the other on the calling thread:
    /// handing them to other threads costs more than it saves.
    static let parallelEntries = 64

    /// One engine with its feed, and the part of the current batch it takes.
    struct Worker: Sendable {
        var engine: FusionEngine
        var feed = EngineFeed()
        var part: SightingBatch
        var outputs: [FusionOutput] = []
        var handles: [DeviceHandle] = []

        mutating func run(gateway: Int) {
            feed.feed(part, gateway: gateway, &engine, into: &outputs, handles: &handles)
        }

        mutating func feed(_ batch: SightingBatch, gateway: Int, into out: inout [FusionOutput], handles h: inout [DeviceHandle]) {
            feed.feed(batch, gateway: gateway, &engine, into: &out, handles: &h)
        }

        mutating func tick(to t: Double, into out: inout [FusionOutput]) {
            feed.advance(&engine, to: t, into: &out)
        }

        mutating func close(through t: Double, into out: inout [FusionOutput]) {
            feed.close(&engine, through: t, into: &out)
        }
    }

    /// `count` workers (at least 1) for `site`, in an aggregator of a site with `shards` shards;
    /// `teacher` for a supervised calibration (`FusionEngine.init(site:teacher:)`).
    public init(site: Site, count: Int = 1, shards: Int = 1, teacher: CalibrationTeacher? = nil) {
        self.site = site
        self.count = max(1, count)
        self.shards = max(1, shards)
        let empty = SightingBatch(gateway: "", boot: "", seq: 0, start: 0, end: 0, sightings: [])
        let first = FusionEngine(site: site, teacher: teacher)
        workers = (0..<self.count).map { w in Worker(engine: w == 0 ? first : FusionEngine(sameSiteAs: first), part: empty) }
    }

    /// The worker that owns `device` among `count`: FNV-1a (64 bit) of the id's UTF-8 bytes, modulo
    /// the count. Fixed forever (a restart, another machine, a replay all place a device alike).
    /// The same hash as the shards of a sharded installation (`ShardLayout.hash`).
    /// With `shards` > 1, of the hash divided by the shard count (see ``shards``).
    public static func worker(of device: DeviceID, count: Int, shards: Int = 1) -> Int {
        guard count > 1 else { return 0 }
        return Int(ShardLayout.hash(device) / UInt64(max(1, shards)) % UInt64(count))
    }

    func worker(of device: DeviceID) -> Int { Self.worker(of: device, count: count, shards: shards) }

    /// Worker `w`'s handle `h` as the global handle callers see (`h × count + w`).
    private func global(_ h: DeviceHandle, worker w: Int) -> DeviceHandle {
        DeviceHandle(index: h.index * Int32(count) + Int32(w))
    }

    /// Worker `w`'s checkpoint with its ordinal made global (slot × count + w).
    private func global(_ cp: DeviceCheckpoint, worker w: Int) -> DeviceCheckpoint {
        var cp = cp
        cp.ordinal = cp.ordinal * count + w
        return cp
    }

    /// The engine of worker `w` (for inspection: counters, calibration, tests).
    public func engine(_ w: Int) -> FusionEngine { workers[w].engine }

    // MARK: Evidence

    /// Feeds one edge batch from gateway index `gateway` (`EngineFeed.feed` per worker): `handles`
    /// receives each entry's global device handle, in the batch's order, and `out` the workers'
    /// outputs, worker 0's first.
    public mutating func feed(_ batch: SightingBatch, gateway: Int, into out: inout [FusionOutput], handles: inout [DeviceHandle]) {
        if count == 1 {
            workers[0].feed(batch, gateway: gateway, into: &out, handles: &handles)
            return
        }
        let n = count
        for w in 0..<n {
            workers[w].part.v = batch.v
            workers[w].part.gateway = batch.gateway
            workers[w].part.boot = batch.boot
            workers[w].part.seq = batch.seq
            workers[w].part.start = batch.start
            workers[w].part.end = batch.end
            workers[w].part.sightings.removeAll(keepingCapacity: true)
        }
        places.removeAll(keepingCapacity: true)
        for entry in batch.sightings {
            let w = worker(of: entry.device)
            places.append(Int32(workers[w].part.sightings.count * n + w))
            workers[w].part.sightings.append(entry)
        }
        if batch.sightings.count >= Self.parallelEntries {
            workers.withUnsafeMutableBufferPointer { all in
                // Each iteration touches only its own worker, and `concurrentPerform` returns
                // when all have finished.
                nonisolated(unsafe) let all = all
                DispatchQueue.concurrentPerform(iterations: n) { w in all[w].run(gateway: gateway) }
            }
        } else {
            for w in 0..<n { workers[w].run(gateway: gateway) }
        }
        handles.removeAll(keepingCapacity: true)
        for place in places {
            let w = Int(place) % n, position = Int(place) / n
            handles.append(global(workers[w].handles[position], worker: w))
        }
        collect(into: &out)
    }

    /// Applies one reading of `device` (one line of `waymark replay`'s sightings input), after
    /// `tick(to:)` for its time.
    public mutating func ingest(device: DeviceID, gateway: Int, time: Double, rssi: Double, tx: Double?,
                                into out: inout [FusionOutput]) {
        let w = worker(of: device)
        let handle = workers[w].engine.handle(for: device)
        workers[w].engine.ingest(Observation(device: handle, gateway: gateway, time: time, rssi: rssi, tx: tx), into: &out)
    }

    /// Advances every worker's timers when `t` has reached its next whole second (`EngineFeed`).
    public mutating func tick(to t: Double, into out: inout [FusionOutput]) {
        for w in 0..<count { workers[w].tick(to: t, into: &out) }
    }

    /// Every gateway's evidence up to `t` has been fed (the aggregator's reorder watermark): every
    /// worker's timers advance to the whole second `t` is in (`EngineFeed.close`).
    public mutating func close(through t: Double, into out: inout [FusionOutput]) {
        for w in 0..<count { workers[w].close(through: t, into: &out) }
    }

    /// A gateway's retained status changed: every worker hears it.
    public mutating func gatewayStatus(_ gateway: Int, online: Bool, at t: Double) -> [FusionOutput] {
        var out: [FusionOutput] = []
        for w in 0..<count { out += workers[w].engine.gatewayStatus(gateway, online: online, at: t) }
        return out
    }

    /// End of input: every worker fires its due timers and closes open visits and journeys at `t`.
    public mutating func finish(at t: Double) -> [FusionOutput] {
        var out: [FusionOutput] = []
        for w in 0..<count { out += workers[w].engine.finish(at: t) }
        return out
    }

    private mutating func collect(into out: inout [FusionOutput]) {
        for w in 0..<count where !workers[w].outputs.isEmpty {
            out += workers[w].outputs
            workers[w].outputs.removeAll(keepingCapacity: true)
        }
    }

    // MARK: State

    /// The global handle of a device the workers already know.
    public func existingHandle(for device: DeviceID) -> DeviceHandle? {
        let w = worker(of: device)
        return workers[w].engine.existingHandle(for: device).map { global($0, worker: w) }
    }

    /// The next whole second of evidence time at which every worker's timers will have advanced
    /// (the earliest of the workers'; −∞ until each has seen evidence).
    public var nextTick: Double { workers.reduce(.infinity) { min($0, $1.feed.nextTick) } }

    /// Devices held, over all workers.
    public var deviceCount: Int { workers.reduce(0) { $0 + $1.engine.deviceCount } }
    /// Devices forgotten since the start, over all workers.
    public var forgottenDevices: Int { workers.reduce(0) { $0 + $1.engine.forgottenDevices } }
    /// Readings rejected or ignored, by cause, over all workers.
    public var counters: FusionCounters { workers.dropFirst().reduce(workers[0].engine.counters) { $0 + $1.engine.counters } }

    /// What the workers learned about the venue's radio: the one engine's calibration with one
    /// worker; with several, their estimates pooled by the evidence behind each (for metrics and
    /// summaries: each worker goes on using its own).
    public var calibration: VenueCalibration {
        count == 1 ? workers[0].engine.calibration : VenueCalibration.pooled(workers.map(\.engine.calibration))
    }

    /// The devices whose timers ran since the last call (`FusionEngine.takeTimerTouched`).
    public mutating func takeTimerTouched() -> [DeviceID] {
        (0..<count).flatMap { workers[$0].engine.takeTimerTouched() }
    }

    /// One device's state; its ordinal is its slot in its worker × count + the worker, so that
    /// restoring every checkpoint in ordinal order gives each worker its devices in its own order.
    public func checkpoint(device: DeviceID) -> DeviceCheckpoint? {
        let w = worker(of: device)
        return workers[w].engine.checkpoint(device: device).map { global($0, worker: w) }
    }

    /// Every device's state.
    public func checkpoint() -> [DeviceCheckpoint] {
        (0..<count).flatMap { w in workers[w].engine.checkpoint().map { global($0, worker: w) } }
    }

    /// Restores a device's state in the worker that owns it. Checkpoints saved with another
    /// number of workers restore too (each device goes to its worker under the new count; only the
    /// order in which a worker visits its devices can differ from the run that saved them).
    @discardableResult
    public mutating func restore(_ saved: DeviceCheckpoint) -> DeviceHandle {
        let w = worker(of: saved.device)
        var cp = saved
        cp.ordinal = saved.ordinal / count
        return global(workers[w].engine.restore(cp), worker: w)
    }

    /// Each worker's timer clock, calibration and gateway health, for the aggregator's checkpoint.
    public func workerCheckpoints() -> [FusionWorkerCheckpoint] {
        workers.map { w in
            FusionWorkerCheckpoint(nextTick: w.feed.nextTick.isFinite ? w.feed.nextTick : -1,
                                   evidenceEnd: w.feed.evidenceEnd.isFinite ? w.feed.evidenceEnd : nil,
                                   calibration: w.engine.calibrationCheckpoint(),
                                   gatewayHealth: w.engine.gatewayHealthCheckpoint())
        }
    }

    /// Set by `restore(workers:)` when the site file's `calibration:` section was not the one the
    /// saved calibration was learned from: the engines started from the file's values
    /// (`FusionEngine.restore(calibration:)`).
    public private(set) var calibrationStartedFromSiteFile = false

    /// Restores the workers' state. Saved with as many workers: each its own. Saved with another
    /// number (or one engine before workers existed: a single element): worker `i` starts from the
    /// saved worker `i` modulo their number — a calibration learned from other devices of the same
    /// venue, which each worker then goes on adapting to its own.
    public mutating func restore(workers saved: [FusionWorkerCheckpoint]) {
        guard !saved.isEmpty else { return }
        for w in 0..<count {
            let s = saved[w % saved.count]
            workers[w].feed.nextTick = s.nextTick >= 0 ? s.nextTick : -.infinity
            // Saved before it existed: the evidence then reached the last tick at least.
            workers[w].feed.evidenceEnd = s.evidenceEnd ?? (s.nextTick >= 0 ? s.nextTick - 1 : -.infinity)
            if let c = s.calibration, !workers[w].engine.restore(calibration: c) { calibrationStartedFromSiteFile = true }
            if let h = s.gatewayHealth { workers[w].engine.restore(gatewayHealth: h) }
        }
    }
}

/// One fusion worker's engine-wide state in the aggregator's checkpoint.
public struct FusionWorkerCheckpoint: Codable, Sendable, Equatable {
    /// The worker's next 1-second tick (evidence time; −1: none yet).
    public var nextTick: Double
    /// The end of the latest second its evidence reached (`EngineFeed.evidenceEnd`; nil: none yet, or
    /// saved before it was kept).
    public var evidenceEnd: Double?
    public var calibration: CalibrationCheckpoint?
    public var gatewayHealth: [String: GatewayHealthCheckpoint]?

    public init(nextTick: Double, evidenceEnd: Double? = nil, calibration: CalibrationCheckpoint?,
                gatewayHealth: [String: GatewayHealthCheckpoint]?) {
        self.nextTick = nextTick
        self.evidenceEnd = evidenceEnd
        self.calibration = calibration
        self.gatewayHealth = gatewayHealth
    }
}

extension FusionCounters {
    static func + (a: FusionCounters, b: FusionCounters) -> FusionCounters {
        var s = a
        s.accepted += b.accepted
        s.outliers += b.outliers
        s.implausibleRSSI += b.implausibleRSSI
        s.implausibleTxPower += b.implausibleTxPower
        s.invalidTime += b.invalidTime
        s.unknownGateway += b.unknownGateway
        s.unknownDevice += b.unknownDevice
        return s
    }
}
