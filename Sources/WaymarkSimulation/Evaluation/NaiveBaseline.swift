public import WaymarkCore

/// The baseline every evaluation is compared with: a device's current region is the region
/// anchored at the gateway that heard it with the strongest RSSI in the last `windowS` seconds
/// (window (t − windowS, t]; equal RSSI: the more recent sighting), and no region when no gateway
/// heard it in that window. A visit is each maximal period with the same current region.
///
/// Computed exactly with a per-device monotonic queue: the maximum changes only when a sighting
/// arrives or when the strongest one ages out of the window.
public struct NaiveBaseline {
    public let site: Site
    public let windowS: Double

    struct Entry { var t: Double; var rssi: Double; var gateway: Int }

    struct DeviceState {
        /// Decreasing RSSI from front to back, increasing time.
        var queue: [Entry] = []
        var head = 0
        var lastT = -Double.infinity
        var region: Int? = nil
        var since = 0.0
        var locations: [LocationChange] = []
        var visits: [ScoredVisit] = []

        var front: Entry? { head < queue.count ? queue[head] : nil }

        mutating func set(_ r: Int?, at t: Double) {
            guard r != region || locations.isEmpty else { return }
            if let old = region { visits.append(ScoredVisit(region: old, entered: since, exited: t, reportedAt: t)) }
            region = r
            since = t
            locations.append(LocationChange(t: t, region: r))
        }
    }

    private var states: [DeviceState] = []

    public init(site: Site, windowS: Double = 2) {
        self.site = site
        self.windowS = windowS
    }

    private func regionOf(_ gateway: Int?) -> Int? {
        gateway.flatMap { site.regionsByGateway[$0].first }
    }

    /// Adds one sighting. Sightings should come in time order per device; an earlier one is taken
    /// as arriving at the device's latest time.
    public mutating func add(device: Int, gateway: Int, time: Double, rssi: Double) {
        while states.count <= device { states.append(DeviceState()) }
        let t = max(time, states[device].lastT)
        expire(device, until: t)
        var s = states[device]
        s.lastT = t
        while s.queue.count > s.head, s.queue[s.queue.count - 1].rssi <= rssi { s.queue.removeLast() }
        s.queue.append(Entry(t: t, rssi: rssi, gateway: gateway))
        if s.head > 64 && s.head * 2 > s.queue.count { s.queue.removeFirst(s.head); s.head = 0 }
        s.set(regionOf(s.front?.gateway), at: t)
        states[device] = s
    }

    /// Ages out sightings that leave the window at or before `t`.
    private mutating func expire(_ device: Int, until t: Double) {
        while let f = states[device].front, f.t + windowS <= t {
            let at = f.t + windowS
            states[device].head += 1
            states[device].set(regionOf(states[device].front?.gateway), at: at)
        }
    }

    /// Lets every window run out and returns the recorded locations and visits per device.
    public mutating func finish() -> RecordedRun {
        var run = RecordedRun()
        for d in states.indices {
            expire(d, until: .infinity)
            run.ensure(d)
            run.locations[d] = states[d].locations
            run.visits[d] = states[d].visits
        }
        return run
    }
}
