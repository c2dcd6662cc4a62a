import HeapModule
public import WaymarkCore

/// The fusion engine (DESIGN.md §3): turns sightings, gateway status and the passage of time into
/// region states, current regions, visits, journeys, transitions and monitored-set rotations.
///
/// A pure state machine: no I/O, no clock. Every call takes the time of its evidence and returns
/// what happened, in order. The aggregator runs it live; `waymark replay` runs it over a file.
///
/// ```swift
/// var engine = FusionEngine(site: site)
/// let device = engine.handle(for: id)                 // intern once per device
/// let gw = site.gatewayIndex("gw-lobby")!              // intern once per gateway
/// var outputs = engine.ingest(Observation(device: device, gateway: gw, time: t, rssi: -71))
/// outputs += engine.advance(to: now)                   // timers: exits, journeys, silence
/// ```
///
/// Call `advance(to:)` regularly (about once per second of evidence time): it closes each
/// device's second of evidence for the tracker (docs/fusion.md), records smoothed decisions,
/// fires the exit and journey timers of devices that are no longer heard and turns silent
/// gateways into `unknown` regions. Times should be non-decreasing per device; readings older than the device's latest
/// evidence are still filtered, but timers already fired are not undone.
public struct FusionEngine: Sendable {
    public let site: Site
    let ctx: FusionContext
    var devices: [DeviceState] = []
    var deviceIndex: [DeviceID: Int32] = [:]
    /// Hints for `handle(for:)` that spare it hashing the id (`DeviceHandleCache`).
    var handleCache = DeviceHandleCache()
    var health: [GatewayHealth]
    /// Set when a gateway came back; the next `advance` recomputes every device's timers.
    var gatewayReturned = false
    /// Readings rejected or ignored, by cause.
    public internal(set) var counters = FusionCounters()
    /// What the engine has learned about the venue's radio (self-calibration).
    public internal(set) var calibration: VenueCalibration
    /// Devices whose state a timer may have changed since the last `takeTimerTouched()` (flag per
    /// device, and the list of flagged ones): a checkpoint must cover them even when nothing was
    /// output, or a restart would resume from older filter state than the uninterrupted run.
    var timerTouched: [Bool] = []
    var timerTouchedList: [Int32] = []
    /// Slots of forgotten devices (`FusionEngine+Forget.swift`): flag per slot, how many, and the
    /// free ones lowest first (rebuilt from the flags when `freeSlotsStale`, after a restore).
    var vacant: [Bool] = []
    var vacantCount = 0
    var freeSlots = Heap<Int32>()
    var freeSlotsStale = false
    /// Devices forgotten since the engine started.
    public internal(set) var forgottenDevices = 0
    /// Evidence time of the engine's first reading (NaN: none yet; saved with the calibration):
    /// how long a venue whose level is still unknown has gone without placing any device
    /// (`VenueCalibration.reach`).
    var firstEvidence = Double.nan

    /// `teacher`: where devices truly were, for `waymark site calibrate --truth` (the
    /// self-calibration learns from those seconds and places instead of the tracker's).
    public init(site: Site, teacher: CalibrationTeacher? = nil) {
        self.site = site
        self.ctx = FusionContext(site: site, teacher: teacher)
        self.health = Array(repeating: GatewayHealth(), count: site.gateways.count)
        self.calibration = VenueCalibration(site: site)
    }

    /// A fresh engine for `other`'s site that shares its tables (immutable, and for a large venue
    /// megabytes of monitored sets and movement matrices): `FusionWorkers` builds them once.
    init(sameSiteAs other: FusionEngine) {
        site = other.site
        ctx = other.ctx
        health = Array(repeating: GatewayHealth(), count: site.gateways.count)
        calibration = VenueCalibration(site: site)
    }

    /// The handle of `device`, creating its state on first use. Handles are small integers, valid
    /// until the engine forgets the device (`forget_after_s`, in `advance(to:)`; its handle then
    /// goes to a later new device): take a device's handle after advancing the engine to the time
    /// of the reading, as `EngineFeed` does, and do not keep it across `advance` calls.
    public mutating func handle(for device: DeviceID) -> DeviceHandle {
        if let i = handleCache.slot(for: device), holds(device, at: Int(i)) { return DeviceHandle(index: i) }
        if let i = deviceIndex[device] {
            handleCache.note(device, slot: i, devices: devices.count)
            return DeviceHandle(index: i)
        }
        let i = takeSlot()
        devices[Int(i)] = DeviceState(id: device)
        deviceIndex[device] = i
        handleCache.note(device, slot: i, devices: devices.count)
        return DeviceHandle(index: i)
    }

    /// Whether slot `i` is held by `device` (`DeviceHandleCache`'s check of a hint).
    private func holds(_ device: DeviceID, at i: Int) -> Bool {
        i < devices.count && !vacant[i] && devices[i].id == device
    }

    /// The handle of a device already known to the engine.
    public func existingHandle(for device: DeviceID) -> DeviceHandle? {
        deviceIndex[device].map(DeviceHandle.init(index:))
    }

    /// Applies one reading. See `Observation` for the validity rules; invalid readings are counted
    /// in `counters` and change nothing.
    public mutating func ingest(_ o: Observation) -> [FusionOutput] {
        var out: [FusionOutput] = []
        ingest(o, into: &out)
        return out
    }

    /// Applies one reading, appending what happened to `out` (no allocation when nothing did).
    public mutating func ingest(_ o: Observation, into out: inout [FusionOutput]) {
        guard o.gateway >= 0, o.gateway < health.count else { counters.unknownGateway += 1; return }
        guard Int(o.device.index) < devices.count, o.device.index >= 0, !vacant[Int(o.device.index)] else {
            counters.unknownDevice += 1
            return
        }
        guard o.rssi.isFinite, o.rssi <= 0, o.rssi >= -127 else { counters.implausibleRSSI += 1; return }
        let power = o.tx ?? ctx.parameters.defaultMeasuredPowerDBm
        guard power.isFinite, power >= -100, power <= 20 else { counters.implausibleTxPower += 1; return }
        guard o.time.isFinite else { counters.invalidTime += 1; return }
        health[o.gateway].heard(at: o.time, silence: ctx.parameters.gatewaySilenceS)
        let reading = Reading(gateway: Int32(o.gateway), rssi: Float(o.rssi), measuredPower: power,
                              weight: Float(max(1, o.weight)), time: o.time)
        if firstEvidence.isNaN { firstEvidence = o.time }
        let reach = ctx.reach(calibration, waited: o.time - firstEvidence)
        if devices[Int(o.device.index)].observe(reading, reach: reach, ctx, health, &calibration, into: &out) { counters.outliers += 1 }
        counters.accepted += 1
    }

    /// Applies one entry of a gateway's window batch: the window's mean RSSI as one reading at the
    /// time of the last advert, weighted by the number of adverts it averages.
    public mutating func ingest(_ entry: SightingBatch.Entry, device: DeviceHandle, gateway: Int, into out: inout [FusionOutput]) {
        ingest(Observation(device: device, gateway: gateway, windowLast: entry.last, rssiMean: entry.rssiMean,
                           tx: entry.tx, count: entry.count), into: &out)
    }

    /// Marks that `gateway` is alive at `t` without any sighting (an empty batch).
    public mutating func gatewayHeartbeat(_ gateway: Int, at t: Double) {
        guard gateway >= 0, gateway < health.count else { return }
        if !health[gateway].isObservable(at: t, silence: ctx.parameters.gatewaySilenceS) { gatewayReturned = true }
        health[gateway].heard(at: t, silence: ctx.parameters.gatewaySilenceS)
    }

    /// A gateway's retained status changed. Offline makes the regions that depend only on it
    /// `unknown` for every device at `t`; online makes them observable again (they stay `unknown`
    /// until evidence, or become `outside` after `exit_delay_s` without it).
    public mutating func gatewayStatus(_ gateway: Int, online: Bool, at t: Double) -> [FusionOutput] {
        guard gateway >= 0, gateway < health.count else { return [] }
        var out: [FusionOutput] = []
        if online {
            gatewayHeartbeat(gateway, at: t)
        } else if !health[gateway].reportedOffline {
            health[gateway].reportedOffline = true
            for i in devices.indices where !vacant[i] {
                devices[i].markUnobservable(gateway: Int32(gateway), at: t, ctx, health, into: &out)
            }
        }
        return out
    }

    /// Fires every timer due at or before `t`: exits after `exit_delay_s`, journey ends after
    /// `journey_timeout_s`, and gateways silent for `gateway_silence_s`.
    public mutating func advance(to t: Double) -> [FusionOutput] {
        var out: [FusionOutput] = []
        calibration.refresh()
        let silence = ctx.parameters.gatewaySilenceS
        for g in health.indices where !health[g].silenceHandled && !health[g].reportedOffline
            && health[g].lastHeard.isFinite && health[g].lastHeard + silence < t {
            let when = health[g].lastHeard + silence
            health[g].silenceHandled = true
            for i in devices.indices where !vacant[i] {
                devices[i].markUnobservable(gateway: Int32(g), at: when, ctx, health, into: &out)
            }
        }
        let all = gatewayReturned
        gatewayReturned = false
        for i in devices.indices where (all || devices[i].nextDeadline <= t) && !vacant[i] {
            devices[i].expire(upTo: t, ctx, health, &calibration, into: &out)
            if !timerTouched[i] {
                timerTouched[i] = true
                timerTouchedList.append(Int32(i))
            }
            forgetIfDue(i, at: t, into: &out)
        }
        return out
    }

    /// The devices whose timers ran since the last call (their state may have changed without
    /// any output: a closed second of the tracker, a recomputed deadline). The aggregator
    /// checkpoints them with the devices it heard and those with output.
    public mutating func takeTimerTouched() -> [DeviceID] {
        // A slot forgotten since (and not taken again) has no device to report.
        let out = timerTouchedList.filter { !vacant[Int($0)] }.map { devices[Int($0)].id }
        for i in timerTouchedList { timerTouched[Int(i)] = false }
        timerTouchedList.removeAll(keepingCapacity: true)
        return out
    }

    /// End of input: fires due timers, then closes every open visit and journey at `t`.
    public mutating func finish(at t: Double) -> [FusionOutput] {
        var out = advance(to: t)
        for i in devices.indices where !vacant[i] { devices[i].finish(at: t, ctx, health, &calibration, into: &out) }
        return out
    }
}

/// A device interned by `FusionEngine.handle(for:)`: small integers, the lowest free slot first
/// (0, 1, 2, … until a device is forgotten and its slot reused, `FusionEngine+Forget.swift`), only
/// meaningful to the engine that issued them (an unknown or forgotten one is counted and ignored).
public struct DeviceHandle: Hashable, Sendable {
    public let index: Int32
    public init(index: Int32) { self.index = index }
}

/// Readings the engine did not use, by cause (DESIGN.md §3: implausible inputs are rejected and
/// counted, never turned into absurd distances).
public struct FusionCounters: Hashable, Sendable, Codable {
    /// Readings applied (including outliers, which update timing but not the level).
    public var accepted = 0
    /// Readings the RSSI filter rejected as outliers.
    public var outliers = 0
    /// Positive, non-finite or below −127 dBm RSSI.
    public var implausibleRSSI = 0
    /// Measured power at 1 m outside −100…+20 dBm.
    public var implausibleTxPower = 0
    public var invalidTime = 0
    public var unknownGateway = 0
    public var unknownDevice = 0
}
