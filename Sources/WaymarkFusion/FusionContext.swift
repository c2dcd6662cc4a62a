import WaymarkCore

/// The site, reduced to the integer tables the engine's hot path reads, plus the parameters.
/// Built once per engine; shared by reference so that copying an engine stays cheap.
final class FusionContext: Sendable {
    let site: Site
    let parameters: FusionParameters
    let tuning: RSSIFilter.Tuning
    let pathLoss: PathLoss
    let regionIDs: [String]
    let regionGateways: [[Int32]]
    /// For each region, the gateways a device monitoring it listens to (its `links`): the
    /// region's own gateways, and every gateway that anchors no region and has this region as its
    /// nearest on its floor (`Site.unanchoredGatewayRegions`). Core Location's region state
    /// (inside, distance, proximity) comes from `regionGateways` alone.
    let regionListeners: [[Int32]]
    let regionRadius: [Double]
    /// The radius within which a sighting re-arms an inside region's exit timer (`exit_margin_db`).
    let stayRadius: [Double]
    let gatewayIDs: [String]
    let gatewayOffset: [Double]
    /// For each gateway, the regions anchored at it.
    let gatewayRegions: [[Int32]]
    /// For each region, its monitored set: itself first, then by shortest-path length.
    let monitoredSets: [[Int32]]
    let graph: BeaconGraph
    /// The probabilistic tracker's tables (geometry, evidence, movement per monitored set).
    let tracker: TrackerTables
    /// How uncertain the venue's level (measured power plus its correction) is before the
    /// self-calibration has learned from any second (dB²): `VenueCalibration.levelPriorSD`², or 0
    /// when the site file's `calibration:` section gives `measured_power_offset_db`.
    let levelPriorVariance: Double
    /// Where devices truly were, for a supervised calibration (`CalibrationTeacher`); nil in
    /// every other run.
    let teacher: CalibrationTeacher?

    init(site: Site, teacher: CalibrationTeacher? = nil) {
        self.teacher = teacher
        let p = site.fusion
        self.site = site
        parameters = p
        tuning = .init(
            processNoise: Float(p.rssiProcessNoise), measurementNoise: Float(p.rssiMeasurementNoise),
            gateSquared: Float(p.outlierGateSigma * p.outlierGateSigma), maxRun: Int32(p.outlierMaxRun),
            staleness: p.stalenessS, trimmedWindow: p.smoothing == "trimmed_mean" ? p.trimmedWindowS : 0)
        pathLoss = .init(exponent: p.pathLossExponent, immediateM: p.immediateM, nearM: p.nearM)
        regionIDs = site.regions.map(\.id)
        regionGateways = site.regions.map { r in r.gateways.compactMap { site.gatewayIndex($0).map(Int32.init) } }
        regionListeners = Self.listeningGateways(site: site, anchors: regionGateways)
        regionRadius = site.regions.map(\.radiusM)
        let shrink = pow10(-p.exitMarginDB / (10 * p.pathLossExponent))
        stayRadius = site.regions.map { $0.radiusM * shrink }
        gatewayIDs = site.gateways.map(\.id)
        gatewayOffset = site.gateways.map { $0.rssiOffsetDB + (site.calibration.gatewayOffsetsDB[$0.id] ?? 0) }
        gatewayRegions = site.regionsByGateway.map { $0.map(Int32.init) }
        graph = site.graph
        monitoredSets = site.regions.indices.map { r in Self.monitoredSet(of: r, site: site, size: p.monitoredSetSize) }
        tracker = TrackerTables(site: site, parameters: p, monitoredSets: monitoredSets)
        levelPriorVariance = site.calibration.measuredPowerOffsetGiven ? 0 : VenueCalibration.levelPriorSD * VenueCalibration.levelPriorSD
    }

    /// `VenueCalibration.reach` with this site's prior, once the engine has `waited` seconds of
    /// evidence (since its first reading) for a venue still learning its level to place somebody:
    /// from `VenueCalibration.stalledAfterS` on. 1 before that, once the level is known, and with
    /// `self_calibration: false` (the level the site file gives is the one used for good).
    @inline(__always)
    func reach(_ calibration: VenueCalibration, waited: Double) -> Double {
        guard parameters.selfCalibration, waited >= VenueCalibration.stalledAfterS else { return 1 }
        return calibration.reach(prior: levelPriorVariance)
    }

    func isAdjacent(_ a: Int32, _ b: Int32) -> Bool { graph.areAdjacent(Int(a), Int(b)) }

    /// Each region's anchors, followed by the gateways that anchor no region and hang nearest to it
    /// (`Site.unanchoredGatewayRegions`): a device monitoring the region listens to them, so their
    /// silences are evidence too.
    static func listeningGateways(site: Site, anchors: [[Int32]]) -> [[Int32]] {
        var listeners = anchors
        for (g, r, _) in site.unanchoredGatewayRegions() { listeners[r].append(Int32(g)) }
        return listeners
    }

    /// Region `r` and its nearest regions by shortest-path length in the beacon graph, `size` in
    /// all. When the graph is split (`waymark site check` warns) and `r`'s part holds fewer than
    /// `size` regions, the set is filled with the other parts' regions of `r`'s floor by
    /// straight-line distance: an edge the operator left out should make tracking worse, not
    /// impossible (the tracker moves between unlinked regions only as walking allows,
    /// `MotionModel.unlinkedWeight`).
    static func monitoredSet(of r: Int, site: Site, size: Int) -> [Int32] {
        var set = site.graph.nearest(to: r, limit: size).map { Int32($0.region) }
        guard set.count < size else { return set }
        let here = site.regions[r]
        let linked = Set(set)
        let others = site.regions.indices
            .filter { !linked.contains(Int32($0)) && site.regions[$0].floor == here.floor }
            .sorted { (here.position.distance(to: site.regions[$0].position), $0) < (here.position.distance(to: site.regions[$1].position), $1) }
        set += others.prefix(size - set.count).map(Int32.init)
        return set
    }

    /// The path-loss model with the venue's calibrated exponent.
    @inline(__always)
    func pathLoss(_ calibration: VenueCalibration) -> PathLoss {
        PathLoss(exponent: calibration.pathLossExponent, immediateM: pathLoss.immediateM, nearM: pathLoss.nearM)
    }

    /// Regions strictly between `a` and `b` on the shortest path; empty when adjacent or unreachable.
    func pathBetween(_ a: Int32, _ b: Int32) -> [Int32] {
        guard let path = graph.shortestPath(from: Int(a), to: Int(b)), path.regions.count > 2 else { return [] }
        return path.regions.dropFirst().dropLast().map(Int32.init)
    }
}

/// What the engine knows about a gateway's health (DESIGN.md §3: offline or silent gateways make
/// their regions `unknown`).
struct GatewayHealth: Sendable, Hashable, Codable {
    /// Explicit `offline` status received and not yet contradicted.
    var reportedOffline = false
    /// Silence already turned into `unknown` states by `advance(to:)`.
    var silenceHandled = false
    /// Time of the last sighting or heartbeat.
    var lastHeard = -Double.infinity
    /// When the gateway last became available (first sign of life after offline or silence).
    var availableSince = -Double.infinity

    func isObservable(at t: Double, silence: Double) -> Bool {
        !reportedOffline && !silenceHandled && t - lastHeard <= silence
    }

    mutating func heard(at t: Double, silence: Double) {
        if !isObservable(at: t, silence: silence) { availableSince = t }
        reportedOffline = false
        silenceHandled = false
        lastHeard = max(lastHeard, t)
    }
}
