/// A venue: its gateways, its regions and the beacon graph that joins them, the tracking
/// allow-lists and the fusion parameters. Built only by `SiteValidator` from a `SiteDocument`, so a
/// `Site` value is always internally consistent (every reference resolves, ids are unique).
public struct Site: Sendable {
    public let id: String
    public let gateways: [Gateway]
    public let regions: [Region]
    public let edges: [RegionEdge]
    public let tracking: TrackingRules
    public let fusion: FusionParameters
    /// Defaults for `waymark simulate` (the `simulation:` section).
    public let simulation: SimulationSettings
    /// What `waymark site calibrate --write` measured (the `calibration:` section).
    public let calibration: SiteCalibration
    /// Receivers of other projects that `waymark bridge` feeds in as gateways (`foreign_gateways:`).
    public let foreignGateways: [ForeignGateway]
    /// The venue's IANA time zone (`timezone:`, default `UTC`): quiet hours and local times in
    /// notifications. `SiteLoader` checks that the time zone database knows it.
    public let timeZone: String
    /// The notification rules (`notifications:`), in file order.
    public let notifications: [NotificationRule]
    public let graph: BeaconGraph

    private let gatewayIndexByID: [String: Int]
    private let regionIndexByID: [String: Int]
    /// For each gateway index, the indices of the regions anchored at it.
    public let regionsByGateway: [[Int]]

    init(id: String, gateways: [Gateway], regions: [Region], edges: [RegionEdge],
         tracking: TrackingRules, fusion: FusionParameters, simulation: SimulationSettings = .init(),
         calibration: SiteCalibration = .init(), timeZone: String = "UTC", notifications: [NotificationRule] = [],
         foreignGateways: [ForeignGateway] = []) {
        self.calibration = calibration
        self.timeZone = timeZone
        self.notifications = notifications
        self.foreignGateways = foreignGateways
        self.id = id
        self.gateways = gateways
        self.regions = regions
        self.edges = edges
        self.tracking = tracking
        self.fusion = fusion
        self.simulation = simulation
        var g: [String: Int] = [:]
        for (i, gw) in gateways.enumerated() { g[gw.id] = i }
        var r: [String: Int] = [:]
        for (i, region) in regions.enumerated() { r[region.id] = i }
        self.gatewayIndexByID = g
        self.regionIndexByID = r
        var byGateway = Array(repeating: [Int](), count: gateways.count)
        for (ri, region) in regions.enumerated() {
            for gid in region.gateways { if let gi = g[gid] { byGateway[gi].append(ri) } }
        }
        self.regionsByGateway = byGateway
        self.graph = BeaconGraph(
            regionCount: regions.count,
            edges: edges.compactMap { e in
                guard let a = r[e.from], let b = r[e.to] else { return nil }
                return (a, b, e.lengthM)
            })
    }

    public func gatewayIndex(_ id: String) -> Int? { gatewayIndexByID[id] }
    public func regionIndex(_ id: String) -> Int? { regionIndexByID[id] }
    public func gateway(_ id: String) -> Gateway? { gatewayIndexByID[id].map { gateways[$0] } }
    public func region(_ id: String) -> Region? { regionIndexByID[id].map { regions[$0] } }

    /// The regions flagged as entrances, or the first region when none is flagged.
    public var entranceIndices: [Int] {
        let flagged = regions.indices.filter { regions[$0].isEntrance }
        return flagged.isEmpty ? (regions.isEmpty ? [] : [0]) : flagged
    }
}

/// A position in metres in the site's plane; `floor` separates storeys.
public struct Point: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    public func distance(to other: Point) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

/// A receiver: one Raspberry Pi running `waymark-edge`.
public struct Gateway: Hashable, Sendable {
    public var id: String
    public var position: Point
    public var floor: Int
    /// Added to every RSSI this gateway reports, to correct its antenna and enclosure (dB).
    public var rssiOffsetDB: Double
}

/// The area around one beacon position of the venue, heard by the gateway(s) anchored there.
public struct Region: Hashable, Sendable {
    public var id: String
    public var name: String
    public var gateways: [String]
    /// Distance from the region's gateway within which a device counts as inside (metres).
    public var radiusM: Double
    public var ibeacon: IBeaconIdentity?
    /// Where the region is: explicit, or the mean of its gateways' positions.
    public var position: Point
    public var floor: Int
    /// Devices enter and leave the venue here (used by the simulator and the capture report).
    public var isEntrance: Bool
    /// The room (open space) the region lies in: regions of one room have no wall between them
    /// (several beacons along one corridor, the cells of an open hall). Without a `room` key in
    /// the site file each region is a room of its own.
    public var room: String
    /// Free labels (`tags:`) that notification rules match, e.g. `exhibits` or `food`.
    public var tags: [String]

    public init(id: String, name: String, gateways: [String], radiusM: Double, ibeacon: IBeaconIdentity?,
                position: Point, floor: Int, isEntrance: Bool, room: String? = nil, tags: [String] = []) {
        self.id = id
        self.name = name
        self.gateways = gateways
        self.radiusM = radiusM
        self.ibeacon = ibeacon
        self.position = position
        self.floor = floor
        self.isEntrance = isEntrance
        self.room = room ?? id
        self.tags = tags
    }
}

/// A walkable connection between two regions.
public struct RegionEdge: Hashable, Sendable {
    public var from: String
    public var to: String
    public var lengthM: Double
}

/// Which devices a gateway keeps (DESIGN.md §3 "Identity"). Empty lists with `trackAll` false mean
/// nothing is tracked; the validator warns about that.
public struct TrackingRules: Hashable, Sendable {
    public var ibeacon: [IBeaconIdentity] = []
    /// Eddystone-UID namespaces (10 bytes), optionally narrowed to one instance (6 bytes).
    public var eddystone: [EddystoneFilter] = []
    /// AltBeacon id1 values (usually 16 bytes), optionally narrowed by id2/id3.
    public var altbeacon: [AltBeaconFilter] = []
    /// Stable (public or static random) addresses, most significant byte first.
    public var macs: [[UInt8]] = []
    /// Track advertisers that are in no allow-list under a daily-rotated keyed hash of the address.
    public var pseudonymous: Bool = false
    /// The secret for the keyed hash; required when `pseudonymous` is on. Never logged.
    public var pseudonymSecret: String? = nil

    public init() {}

    public struct EddystoneFilter: Hashable, Sendable {
        public var namespace: [UInt8]
        public var instance: [UInt8]?
    }

    public struct AltBeaconFilter: Hashable, Sendable {
        public var id1: [UInt8]
        public var id2: UInt16?
        public var id3: UInt16?
    }

    public var isEmpty: Bool { ibeacon.isEmpty && eddystone.isEmpty && altbeacon.isEmpty && macs.isEmpty && !pseudonymous }

    public func tracksIBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16) -> Bool {
        ibeacon.contains { $0.matches(uuid: uuid, major: major, minor: minor) }
    }

    public func tracksEddystone(namespace: some Collection<UInt8>, instance: some Collection<UInt8>) -> Bool {
        eddystone.contains { f in
            f.namespace.elementsEqual(namespace) && (f.instance.map { $0.elementsEqual(instance) } ?? true)
        }
    }

    public func tracksAltBeacon(id1: some Collection<UInt8>, id2: UInt16, id3: UInt16) -> Bool {
        altbeacon.contains { f in
            f.id1.elementsEqual(id1) && (f.id2.map { $0 == id2 } ?? true) && (f.id3.map { $0 == id3 } ?? true)
        }
    }

    public func tracksMAC(_ address: some Collection<UInt8>) -> Bool {
        macs.contains { $0.elementsEqual(address) }
    }
}
